import { basename } from 'node:path';
import { failureReason } from '../../bundle/failures.js';
import { skippedLinesWarning } from '../../bundle/reader.js';
import { buildSummary, digestIndex } from '../../bundle/summary.js';
import { loadProjectConfig } from '../../plan/config.js';
import { latestBundle, selectBundle } from '../../plan/select-bundle.js';
import { exitCodes } from '../exit-codes.js';
import { summaryTable, table } from '../summary-table.js';

/**
 * `proctor results show [RUN]`: the summary rebuilt from the index, then each case's latest row with why it
 * failed. Without RUN, the latest run.
 */
export const resultsShow = (selector: string | undefined, opts: { json?: boolean; failures?: boolean }): number => {
  const cwd = process.cwd();
  const config = loadProjectConfig(cwd, process.env);
  const dir = selector === undefined ? latestBundle(config) : selectBundle(selector, config, cwd);
  const digest = digestIndex(dir);
  const summary = buildSummary(basename(dir), digest);
  if (opts.json) {
    process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
    return exitCodes.ok;
  }
  if (digest.skippedLines) {
    process.stderr.write(`warning: ${skippedLinesWarning(digest.skippedLines)}\n`);
  }
  const latest = [...digest.latest.values()].filter(
    (r) => !opts.failures || r.outcome === 'failed' || r.outcome === 'error',
  );
  const caseRows = latest.map((r) => [
    `${r.identity.test} · ${r.identity.prompt} · ${r.identity.target}${r.identity.sample ? ` #${r.identity.sample}` : ''}`,
    r.outcome,
    r.score === null ? '-' : r.score.toFixed(3),
    r.outcome === 'failed' || r.outcome === 'error' ? failureReason(dir, r).slice(0, 120) : '',
    r.artifacts,
  ]);
  process.stdout.write(`bundle: ${dir}\n\n`);
  process.stdout.write(`${table(['case', 'outcome', 'score', 'why', 'artifacts'], caseRows)}\n\n`);
  process.stdout.write(
    `${summaryTable(summary)}\n${summary.mixed ? '\n(mixed bundle: rows from several runs)\n' : ''}`,
  );
  return exitCodes.ok;
};
