import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/errors.js';
import { instanceSeeds, parseAssignments, substituteSeeds } from '../../src/plan/seeds.js';
import { YamlSource } from '../../src/plan/yaml-source.js';

describe('seeds', () => {
  it('gives instance i the file seeds[i % n], with --seed flags winning', () => {
    const seeds = instanceSeeds([{ lang: 'py' }, { lang: 'go', n: 2 }], { n: '9' }, 3);
    expect(seeds).toEqual([
      { index: '0', lang: 'py', n: '9' },
      { index: '1', lang: 'go', n: '9' },
      { index: '2', lang: 'py', n: '9' },
    ]);
  });

  it('substitutes into every string, ids included, and leaves other templates alone', () => {
    const source = YamlSource.parse(
      't.task.yaml',
      'steps:\n  - id: s-{{ seed.lang }}\n    prompt: "{{ q }} in {{seed.lang}}"\n',
    );
    expect(substituteSeeds(source, { lang: 'go' }).value).toEqual({ steps: [{ id: 's-go', prompt: '{{ q }} in go' }] });
  });

  it('names an unknown seed at its line and column', () => {
    const source = YamlSource.parse('t.task.yaml', 'id: x\nsteps:\n  - id: s-{{ seed.nope }}\n');
    const error = (() => {
      try {
        substituteSeeds(source, { index: '0' });
      } catch (e) {
        return e;
      }
    })() as InputError;
    expect(error).toBeInstanceOf(InputError);
    expect(error.format()).toMatch(/^t\.task\.yaml:3:9: unknown seed "nope"/);
  });

  it('rejects a flag that is not key=value', () => {
    expect(() => parseAssignments('--seed', ['novalue'])).toThrow(InputError);
  });
});
