import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { readSummary } from '../../bundle/summary.js';
import { loadProjectConfig } from '../../plan/config.js';
import { resultsDir } from '../../plan/select-bundle.js';
import { exitCodes } from '../exit-codes.js';
import { table } from '../summary-table.js';

/** `proctor results list`: every bundle under .proctor/results, newest first. */
export const resultsList = (opts: { json?: boolean }): number => {
  const dir = resultsDir(loadProjectConfig(process.cwd(), process.env));
  const ids = existsSync(dir) ? readdirSync(dir).sort().reverse() : [];
  const bundles = ids.map((id) => ({ id, summary: readSummary(join(dir, id)) }));
  if (opts.json) {
    process.stdout.write(
      `${JSON.stringify(
        bundles.map((b) => ({
          run_id: b.id,
          ...(b.summary ? { counts: b.summary.counts, updated_at: b.summary.updated_at } : {}),
        })),
        null,
        2,
      )}\n`,
    );
    return exitCodes.ok;
  }
  const rows = bundles.map(({ id, summary: s }) =>
    s
      ? [
          id,
          String(s.counts.total),
          String(s.counts.passed),
          String(s.counts.failed),
          String(s.counts.error),
          `${(s.counts.pass_rate * 100).toFixed(1)}%`,
          s.updated_at,
        ]
      : [id, '-', '-', '-', '-', '-', 'no summary'],
  );
  process.stdout.write(`${table(['run', 'cases', 'passed', 'failed', 'errors', 'pass rate', 'updated'], rows)}\n`);
  return exitCodes.ok;
};
