import { z } from 'zod';
import { assertionCommonSchema, assertionConfigSchema } from '../graders/assertion.js';
import { type GraderKind, graderKinds } from '../graders/registry.js';
import { targets } from '../targets/registry.js';
import { workspaceSpecSchema } from '../workspaces/spec.js';
import { optionsSchema } from './options.js';
import { objectSchema } from './zod-walk.js';

/**
 * The schema of a `*.eval.yaml`. Assertions and inline targets are typed per kind from the graders and
 * targets registries, so a new grader or target needs no edit here. The loader validates the same pieces one
 * element at a time (see load-eval.ts) so that each error points at its own node.
 */

const fileRefSchema = z
  .string()
  .regex(/^file:\/\/.+/, 'expected file://PATH')
  .describe('A file, relative to the eval file');
export const varsSchema = z.record(z.string(), z.json()).describe('Template variables: {{ name }} in prompts');
const testIdSchema = z.union([z.string().min(1), z.int()]);

/** Every key an assertion has, whatever its kind (`type`, `weight`, `required`, `id`, `threshold`). */
const commonShape = assertionCommonSchema.shape;

const typedAssertion = (kind: GraderKind): z.ZodType => {
  const type = z.enum([kind, `not-${kind}`]);
  const config = assertionConfigSchema(kind);
  const shape = objectSchema(config)?.shape;
  return shape
    ? z.strictObject({ ...commonShape, ...shape, type })
    : z.intersection(z.object({ ...commonShape, type }), config);
};

/** One assertion, as a union over every grader kind. */
const assertionSchema = (): z.ZodType => z.union(graderKinds.map(typedAssertion));

/** One inline target, as a union over every target kind. */
const inlineTargetSchema = (): z.ZodType =>
  z.union(
    Object.entries(targets).map(([kind, def]) => {
      const own = {
        label: z.string().min(1).optional(),
        kind: z.literal(kind),
        max_concurrency: z.int().min(1).optional(),
      };
      const config = def.config() as z.ZodType;
      const shape = objectSchema(config)?.shape;
      return shape ? z.strictObject({ ...shape, ...own }) : z.intersection(z.object(own), config);
    }),
  );

/** A task step as a test declares it (checked per type when the test is compiled; see task-steps.ts). */
const testStepSchema = z
  .looseObject({ id: z.string().min(1), type: z.string().min(1) })
  .describe('A task step: workspace, exec, snapshot, module, … (the keys of a *.task.yaml step)');

/** Steps around a test's prompt: `before` it (setup), and `after` its grading (snapshots, cleanup). */
const aroundSteps = {
  before: z.array(testStepSchema).optional().describe('Task steps run before the prompt, in its workspace'),
  after: z.array(testStepSchema).optional().describe('Task steps run after grading (snapshot, …)'),
};

export const testSchema = <A extends z.ZodType>(assertion: A) =>
  z.strictObject({
    id: testIdSchema.optional().describe('Unique in the file; default t<N>, N its 1-based position'),
    description: z.string().optional(),
    vars: varsSchema.optional(),
    assert: z.array(assertion).optional(),
    threshold: z.number().min(0).max(1).optional().describe('Score needed to pass, default 1'),
    repeat: z.int().min(1).optional(),
    metadata: z.record(z.string(), z.json()).optional().describe('Free-form facts about the test, kept with it'),
    ...aroundSteps,
  });

export const defaultTestSchema = <A extends z.ZodType>(assertion: A) =>
  z.strictObject({
    vars: varsSchema.optional(),
    assert: z.array(assertion).optional().describe('Run before each test’s own assertions'),
    threshold: z.number().min(0).max(1).optional(),
    before: aroundSteps.before.describe('Run before each test’s own `before` steps'),
    after: aroundSteps.after.describe('Run before each test’s own `after` steps'),
  });

const chatMessageSchema = z.strictObject({
  role: z.enum(['system', 'user', 'assistant']),
  content: z.string().describe('A template, like a prompt'),
});

/** A chat-format prompt: messages sent as they are, the last user message being the case's prompt. */
export const chatSchema = z
  .array(chatMessageSchema)
  .min(1)
  .refine((m) => m.some((x) => x.role === 'user'), 'needs at least one user message');

export const promptObjectSchema = z.strictObject({
  id: z.string().min(1).optional().describe('Default p<N>, N its 1-based position'),
  text: z.string().describe('The prompt, or file://PATH'),
});

const chatObjectSchema = z.strictObject({ id: z.string().min(1).optional(), messages: chatSchema });

interface Parts {
  target: z.ZodType;
  prompt: z.ZodType;
  chat: z.ZodType;
  test: z.ZodType;
  defaultTest: z.ZodType;
  fileRef: z.ZodType;
  workspace: z.ZodType;
}

/** The file's top level, from its element schemas (typed for the JSON Schema, opaque for the loader). */
const evalFileSchema = (parts: Parts) =>
  z.strictObject({
    description: z.string().optional(),
    targets: z
      .array(z.union([z.string().min(1), parts.target]))
      .min(1)
      .optional()
      .describe('Default: every target of proctor.toml'),
    prompts: z.union([z.string(), z.array(z.union([z.string(), parts.prompt, parts.chat])).min(1)]),
    judges: z
      .record(z.string(), parts.target)
      .optional()
      .describe('Judge targets of model-graded assertions, by label: they grade, they are not under test'),
    workspace: parts.workspace
      .optional()
      .describe('Every case runs in a pooled copy of this workspace, reset to its baseline between cases'),
    default_test: parts.defaultTest.optional(),
    tests: z
      .union([
        parts.fileRef,
        z
          .array(z.union([parts.fileRef, parts.test]))
          .min(1, 'must list at least one test (leave `tests:` out to run each prompt once)'),
      ])
      .optional(),
    evaluate_options: optionsSchema.optional(),
  });

/** The loader's first pass: the top-level keys only; each element is checked on its own afterwards. */
export const evalShapeSchema = evalFileSchema({
  target: z.unknown(),
  prompt: z.unknown(),
  chat: z.never(),
  test: z.unknown(),
  defaultTest: z.unknown(),
  fileRef: z.string(),
  workspace: z.unknown(),
});

/** The whole file, typed: what the JSON Schema for editors is made from. */
export const typedEvalFileSchema = () => {
  const assertion = assertionSchema();
  return evalFileSchema({
    target: inlineTargetSchema(),
    prompt: z.union([promptObjectSchema, chatObjectSchema]),
    chat: chatSchema,
    test: testSchema(assertion),
    defaultTest: defaultTestSchema(assertion),
    fileRef: fileRefSchema,
    workspace: workspaceSpecSchema(),
  });
};

/** JSON Schema of `*.eval.yaml`, for editors (`# yaml-language-server: $schema=…`). */
export const evalJsonSchema = (): Record<string, unknown> => ({
  ...z.toJSONSchema(typedEvalFileSchema(), { io: 'input', unrepresentable: 'any' }),
  title: 'Proctor eval file (*.eval.yaml)',
});
