import { InputError } from '../errors.js';
import type { AssertionSpec, TargetSpec } from './spec.js';

/** `judge: self`: the target under test grades its own output, only when asked for by name. */
export const selfJudge = 'self';

/**
 * Gives every model-graded assertion its judge, written into its config: its own `judge:`, else `fallback` (the
 * eval's or proctor.toml's default). None, or a label that is no target, is refused at the assertion's position:
 * there is no silent fallback to the target under test. Returns the judge targets used, by label.
 */
export const resolveJudges = (
  asserts: readonly AssertionSpec[],
  fallback: string | undefined,
  known: (label: string) => TargetSpec | undefined,
): Record<string, TargetSpec> => {
  const judges: Record<string, TargetSpec> = {};
  for (const a of asserts) {
    if (!a.where) continue;
    const own = a.config.judge;
    const label = typeof own === 'string' ? own : fallback;
    if (label === undefined)
      throw new InputError(
        `${a.negate ? 'not-' : ''}${a.type} needs a judge target, and none is configured`,
        a.where,
        'add `judge: LABEL` to the assertion, `judge = "LABEL"` under [defaults] in proctor.toml, or `judge:` under evaluate_options (`judge: self` grades with the target under test)',
      );
    a.config.judge = label;
    if (label === selfJudge) continue;
    const target = known(label);
    if (!target)
      throw new InputError(
        `judge "${label}" is not a target`,
        a.where,
        'declare it as [targets.NAME] in proctor.toml (or inline in the eval), or write `judge: self`',
      );
    judges[label] = target;
  }
  return judges;
};
