import { resolve } from 'node:path';
import { BundleComparison } from '../bundle/compare-bundles.js';
import { markdownListed } from '../bundle/export-markdown.js';
import { type Exporter, type ExportPass, exporters } from '../bundle/exporters.js';
import { FailureList } from '../bundle/failures.js';
import { RepeatTally } from '../bundle/repeats.js';
import type { RowVisitor } from '../bundle/row-visitor.js';
import { exportSource } from './export-file.js';
import type { ReportPlan } from './run-report.js';

// The terminal gets the first failures; `results show --failures` has them all.
export const terminalListed = 20;

export const warn = (message: string): void => {
  process.stderr.write(`warning: ${message}\n`);
};

const newFailureList = (): FailureList => new FailureList(Math.max(terminalListed, markdownListed));

/**
 * What the report needs of the bundle's latest rows, gathered with the run's summary (runEval asks `visitorsFor`
 * its bundle and gives them the rows as they are written): the end of a run reads no index back, and keeps
 * counts, capped lists and spooled exports, never the rows.
 */
export class ReportRows {
  // Enough for the terminal and for a job summary.
  failures = newFailureList();
  /** Cases grouped over their samples, for the gate and the flaky list. */
  repeats = new RepeatTally();
  comparison: BundleComparison | undefined;
  /** The `--export` files, once the bundle is known. */
  exports: { file: string; pass: ExportPass }[] = [];

  private constructor(
    private readonly compareDir: string | undefined,
    private readonly exporters: { file: string; exporter: Exporter }[],
  ) {}

  /** Loads the exporters `plan` names before anything runs, so the pass can start them synchronously. */
  static async of(plan: ReportPlan): Promise<ReportRows> {
    const loaded = await Promise.all(
      plan.exports.map(async ({ file, format }) => ({ file, exporter: await exporters[format].load() })),
    );
    return new ReportRows(plan.compareDir, loaded);
  }

  /**
   * The visitors of a pass over the bundle `dir`, fresh at each call (a run that cannot fold its rows as written
   * asks again for its pass at the end): the exports start here, named after it.
   */
  visitorsFor(dir: string): RowVisitor[] {
    this.close();
    this.failures = newFailureList();
    this.repeats = new RepeatTally();
    this.exports = this.exporters.map(({ file, exporter }) => ({ file, pass: exporter(exportSource(dir)) }));
    const { compareDir } = this;
    const comparison = compareDir === undefined ? undefined : new BundleComparison(compareDir, warn);
    this.comparison = comparison;
    // Compared with its own bundle, the base is read as the run leaves it: its rows come once it is written.
    const compared: RowVisitor[] = !comparison
      ? []
      : resolve(compareDir as string) === resolve(dir)
        ? [{ visit: (row) => comparison.visit(row), afterWriting: true }]
        : [comparison];
    return [this.failures, this.repeats, ...compared, ...this.exports.map((e) => e.pass)];
  }

  /** Removes what the exports spooled, written or not. */
  close(): void {
    for (const e of this.exports) e.pass.close();
  }
}
