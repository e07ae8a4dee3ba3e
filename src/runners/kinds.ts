/**
 * The runner kinds this build can open: a leaf with no imports, so the project config can check `[runner]
 * kind` before anything is opened without loading the runners themselves. open.ts has one factory per kind.
 */
export const runnerKinds = ['local'] as const;
export type RunnerKind = (typeof runnerKinds)[number];

export const isRunnerKind = (kind: string): kind is RunnerKind => (runnerKinds as readonly string[]).includes(kind);
