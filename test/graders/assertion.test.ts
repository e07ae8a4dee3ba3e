import { describe, expect, it } from 'vitest';
import { ZodError } from 'zod';
import { InputError } from '../../src/errors.js';
import {
  assertionCommonSchema,
  assertionConfigSchema,
  createAssertion,
  graderConfigJsonSchemas,
  isCheapKind,
  parseAssertionType,
  resolveAssertion,
  scoreCase,
  takeAsChecked,
} from '../../src/graders/assertion.js';
import { type GraderKind, graderKinds } from '../../src/graders/registry.js';
import { anInput, gradeSync, neverAborted } from './input.js';

const ctx = { baseDir: '/' };

describe('parseAssertionType', () => {
  it('reads a kind and a not- prefix', () => {
    expect(parseAssertionType('contains')).toEqual({ kind: 'contains', negate: false });
    expect(parseAssertionType('not-contains-any')).toEqual({ kind: 'contains-any', negate: true });
  });

  it('returns undefined for unknown types, including inherited property names', () => {
    expect(parseAssertionType('nope')).toBeUndefined();
    expect(parseAssertionType('not-nope')).toBeUndefined();
    expect(parseAssertionType('not-')).toBeUndefined();
    expect(parseAssertionType('constructor')).toBeUndefined();
    expect(parseAssertionType('not-not-contains')).toBeUndefined();
  });
});

describe('createAssertion', () => {
  it('applies the common defaults and the kind config', () => {
    const assertion = createAssertion({ type: 'contains', value: 'foo' }, ctx);
    expect(assertion).toMatchObject({ id: 'contains', weight: 1, required: false });
    expect(gradeSync(assertion.grade, 'foo').pass).toBe(true);
  });

  it('keeps the common keys out of the kind config', () => {
    const assertion = createAssertion({ type: 'regex', value: 'x', weight: 2, required: true, id: 'has-x' }, ctx);
    expect(assertion).toMatchObject({ id: 'has-x', weight: 2, required: true });
  });

  it('negates: pass flips and the score becomes 1 - score', () => {
    const assertion = createAssertion({ type: 'not-contains', value: 'foo' }, ctx);
    expect(assertion.id).toBe('not-contains');
    expect(gradeSync(assertion.grade, 'bar')).toEqual({
      pass: true,
      score: 1,
      reason: 'negated: expected output to contain "foo"',
    });
    expect(gradeSync(assertion.grade, 'foo')).toMatchObject({ pass: false, score: 0 });
    const partial = createAssertion({ type: 'not-contains-all', value: ['a', 'b', 'c', 'd'] }, ctx);
    expect(gradeSync(partial.grade, 'a')).toMatchObject({ pass: true, score: 0.75 });
  });

  it('passes a scored grader at its threshold', async () => {
    const lenient = createAssertion({ type: 'contains-all', value: ['a', 'b', 'c', 'd'], threshold: 0.5 }, ctx);
    expect(gradeSync(lenient.grade, 'a b')).toMatchObject({ pass: true, score: 0.5 });
    expect(gradeSync(lenient.grade, 'a')).toMatchObject({ pass: false, score: 0.25 });
    // javascript runs in a worker thread: its grade is a promise.
    const js = createAssertion({ type: 'javascript', value: 'output.length / 10', threshold: 0.3 }, ctx);
    await expect(js.grade(anInput('abc'), neverAborted)).resolves.toMatchObject({ pass: true, score: 0.3 });
  });

  it('negates after the threshold: not-X passes exactly when X fails', async () => {
    const assertion = createAssertion({ type: 'not-javascript', value: '0.6', threshold: 0.5 }, ctx);
    await expect(assertion.grade(anInput(''), neverAborted)).resolves.toMatchObject({ pass: false, score: 0.4 });
  });

  it('keeps asynchronous graders asynchronous', async () => {
    const assertion = createAssertion({ type: 'not-script', value: 'exit 1' }, { baseDir: '/tmp' });
    const result = assertion.grade(anInput('x'), neverAborted);
    expect(result).toBeInstanceOf(Promise);
    await expect(result).resolves.toMatchObject({ pass: true, score: 1 });
  });

  it('throws the zod error of a bad key and an InputError for an unknown type', () => {
    expect(() => createAssertion({ type: 'contains', valeu: 'x' }, ctx)).toThrowError(ZodError);
    expect(() => createAssertion({ type: 'contains', value: 'x', weight: -1 }, ctx)).toThrowError(ZodError);
    expect(() => createAssertion({ type: 'contains', value: 'x', threshold: 2 }, ctx)).toThrowError(ZodError);
    expect(() => createAssertion({ type: 'sentiment', value: 'x' }, ctx)).toThrowError(InputError);
  });

  it('creates from the plan layer split form too', () => {
    const assertion = resolveAssertion(
      { kind: 'icontains', negate: true, weight: 3, required: false, config: { value: 'FOO' } },
      ctx,
    );
    expect(assertion).toMatchObject({ id: 'not-icontains', weight: 3 });
    expect(gradeSync(assertion.grade, 'foo').pass).toBe(false);
  });
});

describe('takeAsChecked', () => {
  // A cheap kind's config parses to itself: one the plan checked is taken as it is, not parsed per case.
  const samples: Record<string, Record<string, unknown>> = {
    equals: { value: { a: [1, 'x'] } },
    contains: { value: 'x' },
    icontains: { value: 3 },
    'contains-any': { value: ['a', 'b'] },
    'contains-all': { value: ['a'] },
    'starts-with': { value: 'x' },
    cost: { value: 0.5 },
    latency: { value: 100 },
  };

  it('is for the cheap kinds, each of whose configs parses to itself', () => {
    expect(Object.keys(samples).sort()).toEqual(graderKinds.filter(isCheapKind).sort());
    for (const [kind, config] of Object.entries(samples))
      expect(assertionConfigSchema(kind as GraderKind).parse(config)).toEqual(config);
  });

  it('skips the parse of a checked cheap config only: any other config is parsed when its grader is made', () => {
    const unchecked = { value: '' };
    expect(() =>
      resolveAssertion({ kind: 'contains', negate: false, weight: 1, required: false, config: unchecked }, ctx),
    ).toThrowError(ZodError);
    const regex = { value: '(' };
    takeAsChecked('regex', regex);
    expect(() =>
      resolveAssertion({ kind: 'regex', negate: false, weight: 1, required: false, config: regex }, ctx),
    ).toThrowError(ZodError);
    const checked = { value: 'foo' };
    takeAsChecked('contains', checked);
    const assertion = resolveAssertion(
      { kind: 'contains', negate: false, weight: 1, required: false, config: checked },
      ctx,
    );
    expect(gradeSync(assertion.grade, 'a foo').pass).toBe(true);
  });
});

describe('schemas', () => {
  it('exposes each kind config for validation without creating', () => {
    expect(assertionConfigSchema('regex').safeParse({ value: '(' }).success).toBe(false);
    expect(assertionConfigSchema('contains-any').safeParse({ value: ['a'] }).success).toBe(true);
    expect(assertionCommonSchema.parse({ type: 'x' })).toEqual({ type: 'x', weight: 1, required: false });
  });

  it('derives a JSON Schema for every kind', () => {
    const schemas = graderConfigJsonSchemas();
    expect(Object.keys(schemas)).toEqual(graderKinds);
    expect(schemas.contains).toMatchObject({ type: 'object', required: ['value'], additionalProperties: false });
    expect(schemas.script).toMatchObject({ properties: { timeout_s: { default: 60 } } });
  });
});

describe('scoreCase', () => {
  const r = (score: number, weight = 1, required = false) => ({ weight, required, pass: score >= 1, score });

  it('takes the weighted mean and compares it to the threshold', () => {
    expect(scoreCase([r(1, 3), r(0, 1)], 0.75)).toEqual({ score: 0.75, pass: true });
    expect(scoreCase([r(1, 1), r(0, 3)], 0.75)).toEqual({ score: 0.25, pass: false });
    expect(scoreCase([r(0.5), r(1)], 1).pass).toBe(false);
  });

  it('fails on a failed required assertion whatever the score', () => {
    expect(scoreCase([r(1, 10), r(0, 1, true)], 0.5)).toMatchObject({ pass: false });
    expect(scoreCase([r(1, 1), r(0, 0, true)], 0)).toEqual({ score: 1, pass: false });
    expect(scoreCase([r(1, 1, true), r(0, 1)], 0.5)).toEqual({ score: 0.5, pass: true });
  });

  it('scores 1 and passes with no results or no weight', () => {
    expect(scoreCase([], 1)).toEqual({ score: 1, pass: true });
    expect(scoreCase([r(0, 0), r(0, 0)], 1)).toEqual({ score: 1, pass: true });
  });

  // A judge may pass an output at score 0.9: a case whose every weighted assertion passed, passes, whatever the
  // mean; the threshold is how much failure a case may carry, not a bar for scores that passed.
  it('passes when every weighted assertion passed, even with scores under the threshold', () => {
    const passedAt = (score: number, weight = 1) => ({ weight, required: false, pass: true, score });
    expect(scoreCase([passedAt(0.9), passedAt(1)], 1)).toEqual({ score: 0.95, pass: true });
    expect(scoreCase([passedAt(0.9), r(0)], 1)).toEqual({ score: 0.45, pass: false });
    expect(scoreCase([passedAt(0.9), r(0, 0)], 1)).toEqual({ score: 0.9, pass: true });
  });

  it('is not fooled by floating point at the threshold', () => {
    const results = [r(1, 0.1), r(1, 0.7), r(0, 0.2)];
    expect(scoreCase(results, 0.8).pass).toBe(true);
    expect(scoreCase(results, 0.81).pass).toBe(false);
  });
});
