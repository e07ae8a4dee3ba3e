import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { tempProject } from '../support/project.js';

describe('proctor init', () => {
  it('writes a starter project that runs offline and validates, and never overwrites one', async () => {
    const p = tempProject();
    const init = await runCli(['init'], { cwd: p.dir, env: { OPENAI_API_KEY: undefined, OPENAI_BASE_URL: undefined } });
    expect(init.code, init.stderr).toBe(0);
    expect(init.stdout).toContain('wrote proctor.toml');
    // biome-ignore lint/suspicious/noTemplateCurlyInString: proctor.toml holds a literal ${VAR} reference.
    expect(p.read('proctor.toml')).toContain('api_key = "${OPENAI_API_KEY:-}"');
    const run = await runCli(['eval', 'run', 'evals'], { cwd: p.dir, env: { OPENAI_API_KEY: undefined } });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/echo\s+2\s+2\s+0\s+0/);
    const before = p.read('evals/example.eval.yaml');
    p.write('evals/example.eval.yaml', `${before}# edited\n`);
    const again = await runCli(['init'], { cwd: p.dir });
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/already exist[\s\S]*fix:/);
    expect(p.read('evals/example.eval.yaml')).toContain('# edited');
  });
});
