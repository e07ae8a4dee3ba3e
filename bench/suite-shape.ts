// The suite bench/suite.ts and bench/ab.ts run: N distinct tests, each with its own vars (a few fields of varied
// text) and two assertions, `contains` and `equals` on a per-test value, against one OpenAI-compatible target (the
// fake model server, which answers `echo: <prompt>`). One in 20 tests expects a wrong answer, so a run has failures.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

// Varied text, deterministic per test: words picked by a small LCG seeded with the test's index.
const words = [
  ...'alpha harbour quartz lantern meadow cipher orbit velvet granite ember willow signal prism tundra falcon copper'.split(
    ' ',
  ),
  ...'ribbon static marble cobalt thistle canyon beacon saffron river pepper glacier summit'.split(' '),
];
const phrase = (seed: number, length: number): string => {
  let x = seed + 1;
  return Array.from({ length }, () => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return words[x % words.length];
  }).join(' ');
};

const prompt = 'Ticket {{ ref }} from {{ customer }} about {{ topic }}: {{ body }}';
/** Writes the suite; returns each test's prompt as Proctor renders it. */
export const writeSuite = (dir: string, n: number, url: string): string[] => {
  const prompts: string[] = [];
  const tests = Array.from({ length: n }, (_, i) => {
    const vars = {
      ref: `REF-${i}`,
      customer: `${phrase(i, 2)} ${i % 97}`,
      topic: phrase(i * 7, 3),
      body: phrase(i * 13, 12 + (i % 30)),
    };
    prompts.push(`Ticket ${vars.ref} from ${vars.customer} about ${vars.topic}: ${vars.body}`);
    const answer = `echo: ${prompts[i]}`;
    return JSON.stringify({
      id: `t${i}`,
      vars,
      assert: [
        { type: 'contains', value: vars.ref },
        { type: 'equals', value: i % 20 === 19 ? `${answer} (expected otherwise)` : answer },
      ],
    });
  });
  writeFileSync(join(dir, 'tests.jsonl'), `${tests.join('\n')}\n`);
  writeFileSync(
    join(dir, 'suite.eval.yaml'),
    `targets:\n  - { kind: openai, base_url: "${url}", model: fake, api_key: bench }\n` +
      `prompts: ["${prompt}"]\ntests: file://tests.jsonl\n`,
  );
  return prompts;
};
