import type { CaseIdentity } from '../records.js';
import type { PlannedCase } from './matrix.js';
import { coarseKey, type PriorCase, type PriorResults, priorIdentities } from './prior-results.js';

export interface Selection {
  /** The current plan's cases to run. */
  run: PlannedCase[];
  /** Latest results the earlier bundle holds. */
  found: number;
  /** Of those, the ones this command leaves as they are. */
  skipped: number;
  /** Failed or errored cases of the earlier bundle that the current suite no longer has (rerun-failed). */
  missing: CaseIdentity[];
  /**
   * Cases whose earlier result is kept although what decides it changed. A case that runs again is not among
   * them: its new row replaces the old one, which is exactly what a user who fixed an error's cause wants.
   */
  drifted: PlannedCase[];
}

/** The earlier result of a case: its precise row, else (only for rows with no identity) a coarse match. */
const priorOf = (c: PlannedCase, prior: PriorResults): PriorCase | undefined =>
  prior.byKey.get(c.key) ??
  (prior.byCoarse.size ? prior.byCoarse.get(coarseKey(c.test.id, c.target.label)) : undefined);

const isFinal = (p: PriorCase): boolean => p.outcome === 'passed' || p.outcome === 'failed';
const isFailure = (p: PriorCase): boolean => p.outcome === 'failed' || p.outcome === 'error';

const drift = (c: PlannedCase, p: PriorCase): boolean => p.fingerprint !== undefined && p.fingerprint !== c.fingerprint;

/** `--resume`: skip every case whose latest result is final (passed or failed); run the rest of the plan. */
export const selectResume = (cases: readonly PlannedCase[], prior: PriorResults): Selection => {
  const run: PlannedCase[] = [];
  const drifted: PlannedCase[] = [];
  for (const c of cases) {
    const p = priorOf(c, prior);
    if (!p || !isFinal(p)) run.push(c);
    else if (drift(c, p)) drifted.push(c);
  }
  const found = prior.byKey.size + prior.byCoarse.size;
  const finals = [...prior.byKey.values(), ...prior.byCoarse.values()].filter(isFinal).length;
  return { run, found, skipped: finals, missing: [], drifted };
};

/**
 * `--rerun-failed`: exactly the cases whose latest result is failed or error. A case the earlier run did
 * not have (a new test, prompt or target) is never run; a failed case the suite no longer has is reported.
 */
export const selectRerunFailed = (cases: readonly PlannedCase[], prior: PriorResults): Selection => {
  const run: PlannedCase[] = [];
  const drifted: PlannedCase[] = [];
  const matched = new Set<string>();
  for (const c of cases) {
    const p = priorOf(c, prior);
    if (!p) continue;
    if (!isFailure(p)) {
      if (drift(c, p)) drifted.push(c);
      continue;
    }
    run.push(c);
    matched.add(prior.byKey.has(c.key) ? c.key : coarseKey(c.test.id, c.target.label));
  }
  const unmatched: PriorCase[] = [];
  const missing: CaseIdentity[] = [];
  let failures = 0;
  for (const [key, p] of prior.byKey) {
    if (!isFailure(p)) continue;
    failures++;
    if (!matched.has(key)) unmatched.push(p);
  }
  for (const [key, p] of prior.byCoarse) {
    if (!isFailure(p)) continue;
    failures++;
    if (!matched.has(key)) {
      const [test = '', target = ''] = key.split('::');
      missing.push({ eval: '?', test, prompt: '?', target, sample: 0 });
    }
  }
  missing.unshift(...priorIdentities(prior, unmatched));
  const found = prior.byKey.size + prior.byCoarse.size;
  return { run, found, skipped: found - failures, missing, drifted };
};
