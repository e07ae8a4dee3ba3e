import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { graderKinds } from '../../src/graders/registry.js';
import { evalJsonSchema, evalShapeSchema, typedEvalFileSchema } from '../../src/plan/eval-schema.js';
import { targets } from '../../src/targets/registry.js';

describe('eval schema', () => {
  it('checks the same top-level keys in the loader and in the typed schema', () => {
    expect(Object.keys(evalShapeSchema.shape).sort()).toEqual(Object.keys(typedEvalFileSchema().shape).sort());
  });

  it('types assertions per grader kind and inline targets per target kind, from the registries', () => {
    const text = JSON.stringify(evalJsonSchema());
    for (const kind of graderKinds) {
      expect(text).toContain(JSON.stringify(kind));
      expect(text).toContain(JSON.stringify(`not-${kind}`));
    }
    for (const kind of Object.keys(targets)) expect(text).toContain(`"const":${JSON.stringify(kind)}`);
  });

  it('accepts a full file and rejects a misspelled assertion key', () => {
    const schema = typedEvalFileSchema();
    const file = parse(`
targets: [fast, {kind: echo, prefix: ">"}]
prompts: ["hi {{ x }}", {id: b, text: file://b.txt}]
default_test: {vars: {x: 1}, assert: [{type: is-json}]}
tests:
  - {id: a, assert: [{type: not-contains, value: z, weight: 2}], threshold: 0.5}
  - file://more.csv
evaluate_options: {repeat: 2}
`);
    expect(schema.safeParse(file).success).toBe(true);
    expect(schema.safeParse({ prompts: 'x', tests: [{ assert: [{ type: 'contains', valeu: 'z' }] }] }).success).toBe(
      false,
    );
    expect(schema.safeParse({ prompts: 'x', tests: [{ assert: [{ type: 'contians', value: 'z' }] }] }).success).toBe(
      false,
    );
  });
});
