import { execFileSync, spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { cliPath, runCli } from '../support/cli.js';
import { tempProject } from '../support/project.js';

const evalText = `targets:
  - { label: quick, kind: echo }
  - { label: slow, kind: echo, delay_ms: 150 }
prompts: ["{{ w }}"]
tests:
${Array.from({ length: 6 }, (_, i) => `  - { id: t${i}, vars: { w: word${i} }, assert: [{ type: contains, value: word }] }`).join('\n')}
`;

const hasScript = spawnSync('script', ['--version']).status === 0;

describe('progress display', () => {
  it.skipIf(!hasScript)('redraws a block with totals, rate and per-target counts on a terminal', () => {
    const p = tempProject({ 'a.eval.yaml': evalText });
    // util-linux `script` gives the CLI a pseudo-terminal, as a user's shell would.
    const out = execFileSync('script', ['-qec', `${process.execPath} ${cliPath} eval run -j 2`, '/dev/null'], {
      cwd: p.dir,
      encoding: 'utf8',
      env: { ...process.env, NO_COLOR: '1' },
    });
    expect(out).toContain('\x1b[3A\x1b[0J');
    expect(out).toMatch(/12\/12 · 12 passed · 0 failed · 0 errors · [\d.]+\/s/);
    expect(out).toMatch(/ {2}quick +6\/6 +6 passed/);
    expect(out).toMatch(/ {2}slow +6\/6 +6 passed/);
    expect(out).toMatch(/ETA [\d.]+s/);
  });

  it('prints plain lines without a terminal, and only the summary with --quiet', async () => {
    const p = tempProject({ 'a.eval.yaml': evalText });
    const plain = await runCli(['eval', 'run', '-j', '2'], { cwd: p.dir });
    expect(plain.code).toBe(0);
    expect(plain.stderr).not.toContain('\x1b[');
    expect(plain.stderr).toMatch(/^12\/12 · 12 passed/m);
    const quiet = await runCli(['eval', 'run', '-j', '2', '-q'], { cwd: p.dir });
    expect(quiet.code).toBe(0);
    expect(quiet.stderr).toBe('');
    expect(quiet.stdout).toMatch(/all\s+12\s+12\s+0\s+0\s+100\.0%/);
  });
});
