import { pullResults } from '../../api/pull-results.js';
import { loadProjectConfig } from '../../plan/config.js';
import { exitCodes } from '../exit-codes.js';
import { summaryTable } from '../summary-table.js';

/** `proctor results pull RUN [-o DIR]`: write or complete a run's bundle from the store. */
export const resultsPull = async (runId: string, opts: { output?: string }): Promise<number> => {
  const cwd = process.cwd();
  const config = loadProjectConfig(cwd, process.env);
  const pulled = await pullResults({ config, cwd, runId, ...(opts.output ? { output: opts.output } : {}) });
  process.stderr.write(`${pulled.dir}: ${pulled.appended} row(s) written from the store\n`);
  if (pulled.unfinished > 0) {
    process.stderr.write(`note: ${pulled.unfinished} case(s) of ${runId} have not finished; pull again later\n`);
  }
  process.stdout.write(`${summaryTable(pulled.summary)}\n\nbundle: ${pulled.dir}\n`);
  return exitCodes.ok;
};
