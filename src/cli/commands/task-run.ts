import { join } from 'node:path';
import { type KeptResource, runTask } from '../../api/run-task.js';
import type { TaskRunFlags } from '../../plan/task-plan.js';
import { exitCodes } from '../exit-codes.js';
import { onStopSignals, signalExitCode } from '../signals.js';
import { taskRunPrinter } from './task-follow.js';

export interface TaskRunOptions extends TaskRunFlags {
  outputDir?: string;
}

/** One line per resource `--keep` holds. */
const describeResource = ([stepId, r]: KeptResource): string =>
  r.kind === 'workspace'
    ? `${stepId}: workspace ${r.path}`
    : `${stepId}: service pid ${r.pid}${r.ready ? ` (${r.ready})` : ''}, log ${r.log}`;

/**
 * `proctor task run TASK`: runTask with each step printed as the store records it, where `--keep` left
 * workspaces and services while it holds them (until Ctrl-C), and the exit code.
 */
export const taskRun = async (file: string, opts: TaskRunOptions): Promise<number> => {
  const controller = new AbortController();
  const signals = onStopSignals(() => Promise.resolve(controller.abort()));
  let print: ReturnType<typeof taskRunPrinter> = () => {};
  try {
    const { outputDir, ...flags } = opts;
    const result = await runTask({
      cwd: process.cwd(),
      file,
      flags,
      env: process.env,
      ...(outputDir !== undefined ? { outputDir } : {}),
      signal: controller.signal,
      onSubmitted: (plan, submitted) => {
        process.stderr.write(
          `task ${plan.tasks[0]?.id ?? file}: ${submitted.length} run${submitted.length > 1 ? 's' : ''} (${submitted.map((s) => s.runId).join(', ')})\n`,
        );
        print = taskRunPrinter(process.stdout, submitted.length);
      },
      onWarning: (warning) => process.stderr.write(`warning: ${warning}\n`),
      onEvent: (event) => print(event),
      onExport: (runId, dir, failure) =>
        process.stderr.write(
          failure === undefined
            ? `context: ${join(dir, 'context.json')}\n`
            : `error: cannot write ${runId} to ${dir}: ${failure}\n`,
        ),
      onKept: (kept) => {
        for (const { run, resources } of kept) {
          process.stdout.write(`kept ${run.runId}:\n${resources.map((r) => `  ${describeResource(r)}`).join('\n')}\n`);
        }
        process.stdout.write('holding; press Ctrl-C to tear down\n');
      },
      onTornDown: () => process.stdout.write('torn down\n'),
    });
    if (result.interrupted && signals.received) return signalExitCode(signals.received);
    if (result.exportFailed) return exitCodes.failed;
    if (signals.received) return signalExitCode(signals.received);
    const { runs, submitted } = result;
    return runs.length === submitted.length && runs.every((r) => r.status === 'COMPLETED' && r.outcome === 'passed')
      ? exitCodes.ok
      : exitCodes.failed;
  } finally {
    signals.dispose();
  }
};
