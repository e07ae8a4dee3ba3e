import { join, resolve } from 'node:path';
import { lockBundle } from '../../bundle/lock.js';
import type { IndexRow } from '../../bundle/row.js';
import { regradeBundle } from '../../engine/regrade.js';
import { Services } from '../../engine/services.js';
import { InputError } from '../../errors.js';
import { newId } from '../../ids.js';
import { loadProjectConfig } from '../../plan/config.js';
import { filterRegex } from '../../plan/eval-filters.js';
import { planRegrade, type RegradePlan } from '../../plan/regrade-plan.js';
import { resultsDir } from '../../plan/select-bundle.js';
import { currentOwner, ownerProcessState } from '../../runners/owner.js';
import { exitCodes } from '../exit-codes.js';
import { summaryTable } from '../summary-table.js';

export interface RegradeOptions {
  assert?: string;
  judge?: string;
  output?: string;
  maxConcurrency?: number;
  /** Only cases whose test id matches, as `eval run --filter-pattern` picks tests. */
  filterPattern?: string;
  /** Only cases whose target label matches. */
  filterTargets?: string;
}

/** The cases of the plan the filters select; a filter that selects none is bad input, as in `eval run`. */
const selectCases = (plan: RegradePlan, opts: RegradeOptions): RegradePlan => {
  const tests = opts.filterPattern === undefined ? undefined : filterRegex('--filter-pattern', opts.filterPattern);
  const targets = opts.filterTargets === undefined ? undefined : filterRegex('--filter-targets', opts.filterTargets);
  if (!tests && !targets) return plan;
  const chosen = (row: IndexRow): boolean =>
    (!tests || tests.test(row.identity.test)) && (!targets || targets.test(row.identity.target));
  const cases = plan.cases.filter((c) => chosen(c.row));
  const unavailable = plan.unavailable.filter(chosen);
  if (cases.length === 0 && unavailable.length === 0) {
    const flags = [
      ...(opts.filterPattern === undefined ? [] : [`--filter-pattern "${opts.filterPattern}"`]),
      ...(opts.filterTargets === undefined ? [] : [`--filter-targets "${opts.filterTargets}"`]),
    ];
    throw new InputError(
      `${flags.join(' with ')} selects no case of ${plan.bundleDir}`,
      undefined,
      'check the patterns against the test ids and target labels (`proctor results show RUN`)',
    );
  }
  return { ...plan, cases, unavailable };
};

/**
 * `proctor results regrade RUN`: grades the stored outputs of RUN again (its evals' current assertions, or
 * `--assert FILE`'s) into a new bundle whose rows name the output they graded; no target is called. Compare the
 * two bundles with `results compare RUN NEW`.
 */
export const resultsRegrade = async (selector: string, opts: RegradeOptions): Promise<number> => {
  const cwd = process.cwd();
  const config = loadProjectConfig(cwd, process.env);
  const plan = selectCases(
    planRegrade(
      config,
      cwd,
      selector,
      { ...(opts.assert ? { assert: opts.assert } : {}), ...(opts.judge ? { judge: opts.judge } : {}) },
      process.env,
    ),
    opts,
  );
  for (const warning of plan.warnings) process.stderr.write(`${warning}\n`);
  if (plan.unavailable.length)
    process.stderr.write(
      `warning: ${plan.unavailable.length} case(s) have no stored output (or their eval no longer has them): not regraded\n`,
    );
  const runId = newId();
  const outputDir = opts.output ? resolve(cwd, opts.output) : join(resultsDir(config), runId);
  const held = lockBundle(outputDir, currentOwner(), ownerProcessState);
  const services = new Services({ ...process.env });
  const controller = new AbortController();
  const stop = (): void => controller.abort();
  process.once('SIGINT', stop);
  try {
    const summary = await regradeBundle(
      services,
      {
        sourceDir: plan.bundleDir,
        outputDir,
        runId,
        items: plan.cases,
        concurrency: opts.maxConcurrency ?? config.defaults.maxConcurrency ?? 4,
      },
      controller.signal,
    );
    process.stdout.write(
      `${summaryTable(summary)}\n\nregraded ${plan.cases.length} case(s) of ${plan.bundleDir}\nbundle: ${outputDir}\n`,
    );
    return summary.counts.passed === summary.counts.total ? exitCodes.ok : exitCodes.failed;
  } finally {
    process.off('SIGINT', stop);
    held.release();
  }
};
