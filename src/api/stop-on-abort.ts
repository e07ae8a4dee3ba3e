/** A runner as a call stops it: when its caller's signal aborts, or when the call itself gives up. */
export interface RunnerStop {
  /** Resolves once the runner has stopped: a follower ends at its next reading. */
  stopped: Promise<void>;
  /** Stops the runner, once; later calls wait for the same stop. */
  stop(): Promise<void>;
  dispose(): void;
}

/** Stops `runner` when `signal` aborts (at once if it already has). */
export const stopOnAbort = (runner: { stop(): Promise<void> }, signal: AbortSignal | undefined): RunnerStop => {
  let markStopped: () => void = () => {};
  const stopped = new Promise<void>((done) => {
    markStopped = done;
  });
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= runner.stop().then(markStopped);
    return stopping;
  };
  const onAbort = (): void => {
    void stop();
  };
  signal?.addEventListener('abort', onAbort, { once: true });
  if (signal?.aborted) onAbort();
  return { stopped, stop, dispose: () => signal?.removeEventListener('abort', onAbort) };
};
