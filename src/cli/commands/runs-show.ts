import { InputError } from '../../errors.js';
import type { ResultStep } from '../../store/case-artifacts.js';
import type { JournalEntry, RunRecord } from '../../store/store.js';
import { exitCodes } from '../exit-codes.js';
import { table } from '../summary-table.js';
import { withRunsStore } from './runs-store.js';

const at = (ms: number | null): string => (ms === null ? '-' : new Date(ms).toISOString());
const span = (from: number | null, to: number | null): string =>
  from === null || to === null ? '-' : `${((to - from) / 1000).toFixed(2)} s`;

/** How a step ended, as `runs show` lists it: its status and attempt, and when, if the journal says. */
interface ShownEnd {
  status: string;
  attempt: number;
  at?: number;
}

/** Each step's end as an eval case's result records it. */
const recordedEnds = (steps: readonly ResultStep[]): Map<string, ShownEnd> =>
  new Map(steps.map((s) => [s.stepId, { status: s.status, attempt: s.attempts }]));

/** Each step's end as the journal records it; a step rolled back and re-run is journaled again: its latest entry. */
const journaledEnds = (journal: readonly JournalEntry[]): Map<string, ShownEnd> =>
  new Map(journal.map((e) => [e.stepId, { status: 'completed', attempt: e.attempt, at: e.createdAt }]));

/** The task's steps as the instance stored them, each with how it ended. */
const stepRows = (spec: unknown, ends: ReadonlyMap<string, ShownEnd>, run: RunRecord): string[][] => {
  const steps = (spec as { steps?: { id: string; type: string }[] }).steps ?? [];
  return steps.map((s) => {
    const end = ends.get(s.id);
    return [
      `  ${s.id}`,
      s.type,
      end?.status ?? '-',
      end ? String(end.attempt) : '-',
      end?.at !== undefined ? `+${span(run.startedAt, end.at)}` : '-',
    ];
  });
};

/** `proctor runs show RUN_ID`: status, owner, timings, the task's steps, and the journal of its instance. */
export const runsShow = async (runId: string, opts: { json?: boolean }): Promise<number> =>
  withRunsStore(async (store) => {
    const run = await store.getRun(runId);
    if (!run) throw new InputError(`no run "${runId}"`, undefined, 'see `proctor runs list`');
    const [instance, journal, queued, recorded] = await Promise.all([
      store.getInstance(run.instanceId),
      store.readJournal(run.instanceId),
      store.queueLedger().stats(runId),
      // An eval case journals only its resources: its result records its steps.
      run.caseKey === null ? [] : store.resultSteps(run.runId),
    ]);
    if (opts.json) {
      const shown = {
        run,
        ...(queued ? { queue: queued } : {}),
        steps: instance?.spec.steps ?? [],
        journal,
        // An eval case's steps as its result records them: its journal holds only its resources.
        ...(recorded.length ? { recorded } : {}),
      };
      process.stdout.write(`${JSON.stringify(shown, null, 2)}\n`);
      return exitCodes.ok;
    }
    const owner = run.owner
      ? `${run.owner.host} pid ${run.owner.pid} (started ${at(run.owner.startedAt)}), seen ${at(run.seenAt)}`
      : '-';
    const lines = [
      `run       ${run.runId}`,
      `status    ${run.status}${run.outcome ? ` (${run.outcome})` : ''}`,
      `task      ${run.taskId}`,
      `instance  ${run.instanceId}`,
      `group     ${run.groupId}`,
      `owner     ${owner}`,
      `created   ${at(run.createdAt)}`,
      `started   ${at(run.startedAt)}  (queued ${span(run.createdAt, run.startedAt)})`,
      `finished  ${at(run.finishedAt)}  (ran ${span(run.startedAt, run.finishedAt)})`,
      // At-least-once delivery made visible: every execution of a queue run, and those whose commit was refused.
      ...(queued
        ? [`queue     pool ${queued.pool}, executions: ${queued.executions} (${queued.superseded} superseded)`]
        : []),
      ...(run.cancelRequestedAt !== null ? [`cancel    requested ${at(run.cancelRequestedAt)}`] : []),
      ...(run.error ? [`error     ${run.error.kind}: ${run.error.message}`] : []),
      '',
      ...(instance
        ? [
            'steps:',
            table(
              ['  step', 'type', 'status', 'attempt', 'done at'],
              stepRows(instance.spec, new Map([...recordedEnds(recorded), ...journaledEnds(journal)]), run),
            ),
            '',
            ...(journal.length
              ? [
                  'journal:',
                  ...journal.map(
                    (e) =>
                      `  ${e.seq}. ${e.stepId} (attempt ${e.attempt}) ${e.ops.map((o) => `${o.op} ${o.path}`).join(', ')}`,
                  ),
                ]
              : // An eval case journals only the resources its steps leave; its result records the steps.
                [`journal:  none${run.caseKey === null ? '' : ' (an eval case records its steps with its result)'}`]),
          ]
        : ['steps and journal: pruned by `proctor runs gc` (the results bundle keeps the case)']),
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
    return exitCodes.ok;
  });
