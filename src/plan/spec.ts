import type { StepSpec } from '../engine/task.js';
import type { SourcePosition } from '../errors.js';
import type { GraderKind } from '../graders/registry.js';
import type { ConfigReferences, JsonObject, Message } from '../records.js';
import type { RunnerConfig } from '../runners/registry.js';
import type { StoreConfig } from '../store/open.js';
import type { Price } from '../targets/cost.js';

/** proctor.toml, validated, with `${ENV}` resolved everywhere except inside target configs. */
export interface ProjectConfig {
  /** Absolute directory holding proctor.toml (or the cwd when there is none): eval paths are relative to it. */
  root: string;
  /** Absolute path of proctor.toml, when one exists. */
  file?: string;
  runner: RunnerConfig;
  store: StoreConfig;
  targets: Record<string, TargetSpec>;
  defaults: ProjectDefaults;
  /** `[pricing."MODEL"]`: USD per million tokens. */
  pricing: Record<string, Price>;
}

/** A target as declared: `config` stays raw (un-interpolated) so secrets are resolved only in the worker. */
export interface TargetSpec {
  label: string;
  kind: string;
  config: JsonObject;
  /** Cap on this target's cases in flight, inside the command's global budget. */
  maxConcurrency?: number;
  /** Directory that relative paths in the config resolve against. */
  baseDir: string;
  /** Its model's `[pricing]` entry, set by the plan (not part of any fingerprint: a price does not change results). */
  price?: Price;
  /** Its reply's token cap (`max_tokens`), set by the plan with the price: a budget's first estimate uses it. */
  maxOutputTokens?: number;
}

export interface EvalOptions {
  maxConcurrency?: number;
  repeat?: number;
  timeoutS?: number;
  retries?: number;
  /** Label of the default judge target. */
  judge?: string;
  /** `[defaults] cassette`: the cassette mode when `--cassette` is not given. */
  cassette?: 'replay' | 'record' | 'record-missing' | 'off';
}

/** `[defaults]` of proctor.toml: an eval's options, and what only a whole command has. */
export interface ProjectDefaults extends EvalOptions {
  /** `budget_usd`: what one `eval run` may spend (target and judge calls) unless `--budget-usd` says otherwise. */
  budgetUsd?: number;
}

export interface PromptSpec {
  id: string;
  /** The prompt template; for a chat prompt, its last user message. */
  text: string;
  /** A chat-format prompt's messages (templates), when it is one. */
  messages?: PromptMessage[];
}

/** A chat prompt's message: a prompt is written with no tool turns. */
export type PromptMessage = Message & { role: 'system' | 'user' | 'assistant' };

/** One assertion: `type` without its `not-` prefix; `config` is the kind's own keys, already validated. */
export interface AssertionSpec {
  type: GraderKind;
  negate: boolean;
  weight: number;
  required: boolean;
  id?: string;
  threshold?: number;
  config: JsonObject;
  /** Files and commands the grader names, as written: their content goes into the case's fingerprint. */
  references?: ConfigReferences;
  /** Where it is written: a model-graded assertion without a judge is refused there. Never fingerprinted. */
  where?: SourcePosition;
}

export interface TestSpec {
  id: string;
  description?: string;
  vars: JsonObject;
  assert: AssertionSpec[];
  threshold: number;
  repeat: number;
  /** Free-form facts about the test (promptfoo's `metadata`, CSV `__metadata:KEY` columns). */
  metadata?: JsonObject;
  where?: SourcePosition;
  /** Task steps before the prompt (default_test's first), compiled. */
  before?: StepSpec[];
  /** Task steps after grading (default_test's first), compiled. */
  after?: StepSpec[];
}

/** One `*.eval.yaml`, loaded and validated: nothing in it can fail later for a reason the file could have said. */
export interface EvalSpec {
  /** Absolute path. */
  file: string;
  /** Repo-relative POSIX path: the `eval` of every case identity. */
  path: string;
  description?: string;
  targets: TargetSpec[];
  prompts: PromptSpec[];
  tests: TestSpec[];
  options: EvalOptions;
  /** `workspace:` as the step every case starts with. */
  workspace?: StepSpec;
  /** The judge targets its model-graded assertions name (`self` aside), by label. */
  judges: Record<string, TargetSpec>;
}
