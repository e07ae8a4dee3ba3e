import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bundleResult } from '../support/bundle-result.js';
import { runCli } from '../support/cli.js';
import { tempProject } from '../support/project.js';

// An agent that reads its vars as the README says: from PROCTOR_VARS_FILE when set, else from PROCTOR_VARS.
const agent = `const fs = require('node:fs');
const { createHash } = require('node:crypto');
const file = process.env.PROCTOR_VARS_FILE;
const vars = JSON.parse(file ? fs.readFileSync(file, 'utf8') : process.env.PROCTOR_VARS);
const digest = (s) => createHash('sha256').update(s).digest('hex');
console.log([file ? 'file' : 'env', vars.big.length, digest(vars.big), vars.small].join(' '));
`;

interface Row {
  outcome: string;
  attempts: number;
  artifacts: string;
  identity: { test: string };
  error: { kind: string; message: string } | null;
}

describe('cli target vars', () => {
  it('passes vars too large for the environment through a file, on the first attempt', async () => {
    // 200 KiB of multi-byte text: more than Linux takes in one environment variable (128 KiB).
    const big = 'é'.repeat(100 * 1024 + 7);
    const p = tempProject({ 'agent.cjs': agent });
    p.write(
      'big.eval.yaml',
      `targets: [{ kind: cli, command: "node agent.cjs" }]
prompts: ["go"]
tests:
  - { id: large, vars: { big: "${big}", small: s1 }, assert: [{ type: contains, value: "s1" }] }
  - { id: small, vars: { big: "tiny", small: s2 }, assert: [{ type: contains, value: "s2" }] }
`,
    );
    // What Proctor's own environment holds (it may itself run from an exec step) never stands in for a case's vars.
    p.write('stale.json', JSON.stringify({ big: 'stale', small: 'stale' }));
    const r = await runCli(['eval', 'run', 'big.eval.yaml', '--max-concurrency', '1'], {
      cwd: p.dir,
      env: { PROCTOR_VARS_FILE: p.path('stale.json'), PROCTOR_VARS: '{"big":"stale","small":"stale"}' },
    });
    const results = p.path('.proctor/results');
    const bundle = join(results, readdirSync(results)[0] as string);
    const rows = readFileSync(join(bundle, 'index.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Row);
    const output = (test: string): string => {
      const row = rows.find((x) => x.identity.test === test) as Row;
      return bundleResult<{ output: string }>(bundle, row).output;
    };
    expect(
      rows.map((x) => [x.identity.test, x.outcome, x.attempts]),
      JSON.stringify(rows.map((x) => x.error)),
    ).toEqual([
      ['large', 'passed', 1],
      ['small', 'passed', 1],
    ]);
    expect(r.code).toBe(0);
    expect(output('large')).toBe(`file ${big.length} ${createHash('sha256').update(big).digest('hex')} s1`);
    // Small vars stay where agents written before always found them.
    expect(output('small')).toBe(`env 4 ${createHash('sha256').update('tiny').digest('hex')} s2`);
    p.remove();
  });

  it('gives an exec step before the prompt vars too large for the environment, through the same file', async () => {
    const big = 'x'.repeat(200 * 1024);
    const p = tempProject({
      // The step records what it received beside the eval file (its working directory without a workspace).
      'before.cjs': agent.replace('console.log(', "fs.writeFileSync('seen.txt', "),
    });
    p.write(
      'big.eval.yaml',
      `targets: [{ kind: echo }]
prompts: ["go"]
tests:
  - id: large
    vars: { big: "${big}", small: s1 }
    before: [{ id: read-vars, type: exec, command: node before.cjs }]
    assert: [{ type: contains, value: "go" }]
`,
    );
    const r = await runCli(['eval', 'run', 'big.eval.yaml'], { cwd: p.dir });
    expect(r.code, r.stderr + r.stdout).toBe(0);
    expect(p.read('seen.txt')).toBe(`file ${big.length} ${createHash('sha256').update(big).digest('hex')} s1`);
    p.remove();
  });
});
