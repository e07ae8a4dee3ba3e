import type { Exporter } from './exporters.js';
import { latestRows } from './latest-rows.js';
import { skippedLinesWarning } from './reader.js';
import { buildSummary, digestIndex } from './summary.js';

/** One JSON document: the run's summary and the latest row of every case, written a case at a time. */
export const exportJson: Exporter = function* ({ dir, runId, warn }) {
  const summary = buildSummary(runId, digestIndex(dir));
  const latest = latestRows(dir);
  if (latest.skippedLines) warn(skippedLinesWarning(latest.skippedLines));
  yield `{"schema":"proctor.export/1","run_id":${JSON.stringify(runId)},"summary":${JSON.stringify(summary)},"cases":[`;
  let first = true;
  for (const row of latest.rows) {
    yield `${first ? '' : ','}\n${JSON.stringify(row)}`;
    first = false;
  }
  yield '\n]}\n';
};
