import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { writeFileAtomic } from '../bundle/atomic.js';
import { ProctorError } from '../errors.js';
import type { Store } from '../store/store.js';
import { exportedRun } from './artifacts.js';

/**
 * Writes a stored run's final context (`context.json`, loadable by `task run --context-json`), its journal
 * and its artifacts under `dir`. Everything comes from the store, whose entries are already redacted.
 */
export const exportRun = async (store: Store, runId: string, dir: string): Promise<void> => {
  const run = await store.getRun(runId);
  const instance = run && (await store.getInstance(run.instanceId));
  if (!run || !instance) throw new ProctorError('internal', `run ${runId} is not in the store`);
  const journal = await store.readJournal(run.instanceId);
  const { context, artifacts } = exportedRun(instance.context, journal);
  const files: Record<string, string> = {
    'context.json': `${JSON.stringify(
      {
        task_id: run.taskId,
        run_id: run.runId,
        instance_id: run.instanceId,
        status: run.status,
        outcome: run.outcome,
        keep: false,
        start_step: null,
        context,
      },
      null,
      2,
    )}\n`,
    'journal.jsonl': journal.map((e) => JSON.stringify(e)).join('\n') + (journal.length ? '\n' : ''),
    ...Object.fromEntries(Object.entries(artifacts).map(([name, text]) => [join('artifacts', name), text])),
  };
  for (const [name, text] of Object.entries(files)) {
    const file = join(dir, name);
    mkdirSync(dirname(file), { recursive: true });
    writeFileAtomic(file, text);
  }
};
