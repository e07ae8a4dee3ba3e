import { InputError } from '../errors.js';
import type { Env } from '../plan/env.js';
import { loadEvalPaths } from '../plan/load-eval.js';
import type { ProjectConfig } from '../plan/spec.js';

/** What the "new run" form offers: the project's eval files and each one's targets, or why they do not load. */
export interface ProjectEvals {
  evals: { path: string; targets: string[] }[];
  problem: string | null;
}

/** The project's eval files as `eval run` would find them from its root, loaded (so checked) like a run. */
export const projectEvals = (config: ProjectConfig, env: Env): ProjectEvals => {
  try {
    const specs = loadEvalPaths([config.root], config, env);
    return { evals: specs.map((s) => ({ path: s.path, targets: s.targets.map((t) => t.label) })), problem: null };
  } catch (error) {
    if (error instanceof InputError) return { evals: [], problem: error.format() };
    throw error;
  }
};
