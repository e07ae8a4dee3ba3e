import { describePassRule, type PassRule, type RepeatTally } from '../bundle/repeats.js';
import { InputError } from '../errors.js';
import { exitCodes } from './exit-codes.js';

/** How a finished run turns into an exit code: a pass rule per repeated case, and an optional pass-rate floor. */
export interface Gate {
  rule: PassRule;
  failUnder: number | undefined;
}

const fraction = (flag: string, text: string, hint: string): number => {
  const n = Number(text);
  if (text.trim() === '' || !(n >= 0 && n <= 1)) {
    throw new InputError(`${flag} "${text}" is not a fraction between 0 and 1`, undefined, hint);
  }
  return n;
};

/** Reads `--pass-rule` and `--fail-under` before anything runs. */
export const planGate = (opts: { passRule?: string; failUnder?: string }): Gate => {
  const text = opts.passRule ?? 'all';
  const rule: PassRule =
    text === 'all' || text === 'any'
      ? { kind: text }
      : { kind: 'fraction', at: fraction('--pass-rule', text, 'write all, any, or a fraction such as 0.8') };
  const failUnder =
    opts.failUnder === undefined
      ? undefined
      : fraction('--fail-under', opts.failUnder, 'write a pass rate such as 0.9');
  return { rule, failUnder };
};

const pct = (passed: number, total: number): string => `${((total ? passed / total : 0) * 100).toFixed(1)}%`;

/**
 * The exit code of a finished run and what decided it: flaky cases, the pass rule's count, the rate floor.
 * `repeats`: the bundle's latest rows grouped by case.
 */
export const judgeRun = (repeats: RepeatTally, gate: Gate): { code: number; lines: string[] } => {
  const r = repeats.judge(gate.rule);
  const lines: string[] = [];
  if (r.flaky.length) {
    lines.push(`flaky (${r.flaky.length}):`);
    for (const c of r.flaky) {
      const id = c.identity;
      lines.push(`  ${id.eval} · ${id.test} · ${id.prompt} · ${id.target}  ${c.passed}/${c.samples} passed`);
    }
  }
  if (r.repeated || gate.rule.kind !== 'all') {
    lines.push(`pass rule ${describePassRule(gate.rule)}: ${r.passed} of ${r.total} case(s) pass`);
  }
  if (gate.failUnder === undefined) {
    return { code: r.passed === r.total ? exitCodes.ok : exitCodes.failed, lines };
  }
  const floor = gate.failUnder;
  const below = [...r.byTarget]
    .filter(([, t]) => t.passed / t.total < floor)
    .map(([name, t]) => `${name} ${pct(t.passed, t.total)}`);
  if (r.total > 0 && r.passed / r.total < floor) below.unshift(`all ${pct(r.passed, r.total)}`);
  if (r.total === 0) below.push('no cases');
  lines.push(
    below.length ? `below --fail-under ${floor}: ${below.join(', ')}` : `pass rate at or above --fail-under ${floor}`,
  );
  return { code: below.length ? exitCodes.failed : exitCodes.ok, lines };
};
