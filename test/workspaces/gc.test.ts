import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, startCli, waitFor } from '../support/cli.js';
import { processRuns } from '../support/git-repo.js';
import { tempProject } from '../support/project.js';

const service = `require('fs').writeFileSync(process.argv[2], String(process.pid)); setInterval(() => {}, 1000);`;
const agent = `require('fs').writeFileSync(process.argv[2], String(process.pid)); setTimeout(() => {}, 60000);`;

const slots = (dir: string): string[] => {
  const pool = join(dir, '.proctor', 'work', 'pool');
  return existsSync(pool)
    ? readdirSync(pool).flatMap((k) => readdirSync(join(pool, k)).map((s) => join(pool, k, s)))
    : [];
};

describe('proctor runs gc', () => {
  it('removes the workspace and stops the service a SIGKILLed run left', async () => {
    const p = tempProject({ 'template/a.txt': 'a\n' });
    const servicePid = p.path('service.pid');
    const agentPid = p.path('agent.pid');
    p.write('service.js', service);
    p.write('agent.js', agent);
    p.write(
      'gc.eval.yaml',
      `workspace: { template: template }
targets: [{ kind: cli, command: "node ${p.path('agent.js')} ${agentPid}" }]
prompts: ["wait"]
default_test:
  before:
    - id: svc
      type: exec
      command: node ${p.path('service.js')} ${servicePid}
      background: true
      ready: { command: test -f ${servicePid} }
tests: [{ id: only, assert: [{ type: contains, value: x }] }]
`,
    );
    const run = startCli(['eval', 'run', 'gc.eval.yaml'], { cwd: p.dir });
    try {
      await waitFor(() => existsSync(agentPid));
      run.child.kill('SIGKILL');
      await run.done;
      const pid = Number(readFileSync(servicePid, 'utf8'));
      const [slot] = slots(p.dir);
      expect(slot && existsSync(join(slot, 'ws', 'a.txt'))).toBe(true);
      expect(processRuns(pid)).toBe(true);

      const gc = await runCli(['runs', 'gc'], { cwd: p.dir });
      expect(gc.code, gc.stderr).toBe(0);
      expect(gc.stdout).toContain(`removed workspace ${slot}`);
      // The recorded pid leads the service's process group (its shell); the group is stopped as a whole.
      expect(gc.stdout).toMatch(/removed run folder .* stopped pid \d+/);
      expect(existsSync(slot as string)).toBe(false);
      expect(processRuns(pid)).toBe(false);
      expect(readdirSync(join(p.dir, '.proctor', 'work'))).toEqual([]);
    } finally {
      // The agent is the SIGKILLed command's child, not a service: gc has no record of it.
      if (existsSync(agentPid)) process.kill(Number(readFileSync(agentPid, 'utf8')), 'SIGKILL');
      p.remove();
    }
  });
});
