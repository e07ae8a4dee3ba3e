import { describe, expect, it } from 'vitest';
import { graderKinds, graders, isGraderKind } from '../../src/graders/registry.js';

describe('registry', () => {
  it('lists every kind once, in kebab-case', () => {
    expect(graderKinds).toEqual([
      'equals',
      'contains',
      'icontains',
      'contains-any',
      'contains-all',
      'regex',
      'starts-with',
      'is-json',
      'json-schema',
      'javascript',
      'script',
      'llm-rubric',
      'model-graded-closedqa',
      'model-graded-qa',
      'factuality',
      'g-eval',
      'similar',
      'cost',
      'latency',
    ]);
    for (const kind of graderKinds) {
      expect(kind).toMatch(/^[a-z]+(-[a-z]+)*$/);
      expect(typeof graders[kind].create).toBe('function');
    }
  });

  it('recognises only its own kinds', () => {
    expect(isGraderKind('regex')).toBe(true);
    expect(isGraderKind('toString')).toBe(false);
  });
});
