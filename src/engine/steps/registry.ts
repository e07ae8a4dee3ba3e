import { exec } from './exec.js';
import { moduleStep } from './module.js';
import { prompt } from './prompt.js';
import { snapshot } from './snapshot.js';
import type { StepDef } from './step.js';
import { teardown } from './teardown.js';
import { verify } from './verify.js';
import { workspace } from './workspace.js';

/** Every step type. A new type is its own file plus one entry here; the task file schema follows. */
export const steps = { workspace, exec, prompt, verify, snapshot, teardown, module: moduleStep } satisfies Record<
  string,
  StepDef
>;
export type StepKind = keyof typeof steps;
export const stepKinds = Object.keys(steps) as StepKind[];
