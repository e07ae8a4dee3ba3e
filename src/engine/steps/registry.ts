import { prompt } from './prompt.js';
import type { StepDef } from './step.js';
import { verify } from './verify.js';

export const steps = { prompt, verify } satisfies Record<string, StepDef>;
export type StepKind = keyof typeof steps;
