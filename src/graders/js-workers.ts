import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { ProctorError } from '../errors.js';
import { workerThreads } from '../node-modules.js';
import { type GradeInput, stoppedGrader } from './grader.js';
import { jsWorkerCode } from './js-worker-code.js';

/** One call of user code: a function body over (output, vars, context), or an absolute module path. */
export interface JsJob {
  kind: 'body' | 'file';
  code: string;
  input: GradeInput;
}

/** What the worker answered: the raw return value, or where it failed. */
export type JsReply = { ok: true; value: unknown } | { ok: false; stage: 'load' | 'export' | 'threw'; message: string };

interface Call {
  job: JsJob;
  /** Names the grader in messages: `javascript check.mjs`. */
  source: string;
  timeoutS: number;
  signal: AbortSignal;
  resolve(reply: JsReply): void;
  reject(error: Error): void;
}

/** A worker and how its current call ends, when it has one. */
interface Slot {
  worker: Worker;
  end?: (outcome: { reply: JsReply } | { error: Error }) => void;
}

/**
 * Runs user JavaScript off the main thread, so no grader can block the event loop: `while (true) {}`, a promise
 * that never settles or a module that loops while loading are ended by terminating their worker on the grader's
 * timeout or its signal (the case's deadline, a Ctrl-C), and the process stays responsive. A worker runs one
 * call at a time and a call never waits for a busy one (a new worker starts instead), so a runaway call never
 * delays or takes down another case's: how many run at once is bounded by the cases in flight. Idle workers
 * are kept and reuse what they compiled, so a call usually costs one message each way.
 */
export class JsWorkerPool {
  private readonly idle: Slot[] = [];
  private readonly gone = new WeakSet<Slot>();

  /** `keepIdle`: how many idle workers stay up between calls; more are ended as their calls finish. */
  constructor(private readonly keepIdle: number) {}

  run(job: JsJob, source: string, timeoutS: number, signal: AbortSignal): Promise<JsReply> {
    if (signal.aborted) return Promise.reject(stoppedGrader(signal, source));
    return new Promise((resolve, reject) => {
      const call: Call = { job, source, timeoutS, signal, resolve, reject };
      this.dispatch(this.idle.pop() ?? this.spawn(), call);
    });
  }

  private spawn(): Slot {
    const slot: Slot = { worker: new (workerThreads().Worker)(jsWorkerCode, { eval: true }) };
    // Permanent: a worker can die between calls (a timer of user code that throws), and an 'error' with no
    // listener would crash this process.
    slot.worker.on('error', (error) => this.lose(slot, { error: crashed(error) }));
    slot.worker.on('exit', (code) => this.lose(slot, { error: exited(code) }));
    slot.worker.on('message', (reply: JsReply) => slot.end?.({ reply }));
    // Idle workers must not keep a finished command alive; a call in flight holds its own timer. After the
    // listeners: adding a 'message' listener refs the worker's port again.
    slot.worker.unref();
    return slot;
  }

  private dispatch(slot: Slot, call: Call): void {
    const { source, signal, timeoutS } = call;
    const stop = (error: Error): void => {
      finish({ error });
      this.discard(slot);
    };
    const onAbort = (): void => stop(stoppedGrader(signal, source));
    const timer = setTimeout(
      () => stop(new ProctorError('grader_error', `${source} did not finish within ${timeoutS}s (timeout_s)`)),
      timeoutS * 1000,
    );
    const finish = (outcome: { reply: JsReply } | { error: Error }): void => {
      slot.end = undefined;
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      if ('reply' in outcome) {
        call.resolve(outcome.reply);
        this.release(slot);
      } else call.reject(outcome.error);
    };
    slot.end = finish;
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      slot.worker.postMessage(call.job);
    } catch (error) {
      stop(new ProctorError('grader_error', `${source} cannot be given this case: ${String(error)}`, { cause: error }));
    }
  }

  private release(slot: Slot): void {
    if (this.idle.length < this.keepIdle) this.idle.push(slot);
    else this.discard(slot);
  }

  /** A worker that died by itself: its call, if it had one, fails. */
  private lose(slot: Slot, outcome: { error: Error }): void {
    slot.end?.(outcome);
    this.discard(slot);
  }

  /** Ends a worker once: a terminated worker reports its exit too. */
  private discard(slot: Slot): void {
    if (this.gone.has(slot)) return;
    this.gone.add(slot);
    const at = this.idle.indexOf(slot);
    if (at >= 0) this.idle.splice(at, 1);
    void slot.worker.terminate();
  }
}

const crashed = (error: Error): Error =>
  new ProctorError('grader_error', `javascript grader crashed its worker: ${error.message}`, { cause: error });
const exited = (code: number): Error =>
  new ProctorError('grader_error', `javascript grader ended its worker (exit code ${code})`);

let shared: JsWorkerPool | undefined;

/** The process's pool, started on first use; it keeps as many idle workers as there are cores. */
export const jsWorkers = (): JsWorkerPool => {
  shared ??= new JsWorkerPool(Math.max(2, availableParallelism()));
  return shared;
};
