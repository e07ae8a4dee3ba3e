import type { StepSpec } from './task.js';

/** The steps `spec` waits for: its `depends_on`, or (absent) every earlier step. */
export const dependencies = (spec: StepSpec, index: number, all: readonly StepSpec[]): string[] =>
  spec.dependsOn ?? all.slice(0, index).map((s) => s.id);

/** Every step `id` transitively depends on, itself included. */
export const ancestors = (all: readonly StepSpec[], id: string): Set<string> => {
  const out = new Set<string>();
  const visit = (at: string): void => {
    if (out.has(at)) return;
    out.add(at);
    const index = all.findIndex((s) => s.id === at);
    const spec = all[index];
    if (spec) for (const d of dependencies(spec, index, all)) visit(d);
  };
  visit(id);
  return out;
};

/**
 * The span a retry re-runs: the steps on a path from `from` to `to`, both included (descendants of `from`
 * that `to` depends on). A step beside the span keeps its result.
 */
export const span = (all: readonly StepSpec[], from: string, to: string): string[] => {
  const up = ancestors(all, to);
  return all.filter((s) => up.has(s.id) && ancestors(all, s.id).has(from)).map((s) => s.id);
};
