import { cpSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCli, startCli, waitFor } from '../support/cli.js';
import { filesContaining } from '../support/files.js';
import { tempProject } from '../support/project.js';

const examples = fileURLToPath(new URL('../../examples', import.meta.url));
const sqlite = fileURLToPath(new URL('../../node_modules/better-sqlite3/lib/index.js', import.meta.url));

interface Exported {
  status: string;
  context: Record<string, Record<string, unknown>>;
}

/** The runs `--output-dir out` wrote, in run order. */
const exported = (
  dir: string,
): { context: Exported; journal: { stepId: string; ops: { op: string; path: string }[]; output: unknown }[] }[] =>
  readdirSync(join(dir, 'out'))
    .sort()
    .map((run) => ({
      context: JSON.parse(readFileSync(join(dir, 'out', run, 'context.json'), 'utf8')) as Exported,
      journal: readFileSync(join(dir, 'out', run, 'journal.jsonl'), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l)),
    }));

const freePort = (): Promise<number> =>
  new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

const portOpen = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

const workDirs = (dir: string): string[] => {
  const root = join(dir, '.proctor', 'work');
  return existsSync(root) ? readdirSync(root) : [];
};

const seededTask = `
id: seeded
seeds: [{ name: alpha }, { name: beta }]
steps:
  - id: make-{{ seed.name }}
    type: exec
    command: echo made {{ seed.name }}
  - id: check-{{ seed.name }}
    type: verify
    verifier_id: v-{{ seed.name }}
    input: make-{{ seed.name }}
    assert: [{ type: contains, value: "{{ seed.name }}" }]
`;

describe('proctor task run', () => {
  it('substitutes seeds into step ids and verifier ids at k=1 and k=2', async () => {
    const project = tempProject({ 'seeded.task.yaml': seededTask });
    const one = await runCli(['task', 'run', 'seeded.task.yaml', '--k', '1', '--output-dir', 'out'], {
      cwd: project.dir,
    });
    expect(one.code, one.stderr).toBe(0);
    expect(one.stdout).toContain('✓ make-alpha');
    expect(one.stdout).toContain('      made alpha');
    expect(one.stdout).toContain('✓ check-alpha passed score 1.00');
    expect(Object.keys(exported(project.dir)[0]?.context.context.verifications ?? {})).toEqual(['v-alpha']);

    const two = tempProject({ 'seeded.task.yaml': seededTask });
    const result = await runCli(['task', 'run', 'seeded.task.yaml', '--k', '2', '--output-dir', 'out'], {
      cwd: two.dir,
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('[1] ✓ make-alpha');
    expect(result.stdout).toContain('[2] ✓ make-beta');
    expect(result.stdout).toContain('[2] ✓ check-beta passed score 1.00');
    const runs = exported(two.dir);
    expect(runs.map((r) => Object.keys(r.context.context.verifications ?? {}))).toEqual([['v-alpha'], ['v-beta']]);
    expect(runs.map((r) => r.journal.map((e) => e.stepId))).toEqual([
      ['make-alpha', 'check-alpha'],
      ['make-beta', 'check-beta'],
    ]);
  });

  it('resumes a stored context at a start step without running the earlier steps', async () => {
    const project = tempProject({
      'resume.task.yaml': `
id: resume
steps:
  - { id: first, type: exec, command: 'echo first >> "$PROCTOR_TASK_DIR/side.txt"' }
  - { id: second, type: exec, command: 'echo second >> "$PROCTOR_TASK_DIR/side.txt"' }
  - { id: third, type: exec, command: 'echo third >> "$PROCTOR_TASK_DIR/side.txt"' }
`,
      // The file says to start at `first`: the command's --start-step wins.
      'saved.json': JSON.stringify({ context: { outputs: { first: { text: 'from the file' } } }, start_step: 'first' }),
    });
    const result = await runCli(
      [
        'task',
        'run',
        'resume.task.yaml',
        '--context-json',
        'saved.json',
        '--start-step',
        'third',
        '--output-dir',
        'out',
      ],
      { cwd: project.dir },
    );
    expect(result.code, result.stderr).toBe(0);
    expect(project.read('side.txt')).toBe('third\n');
    expect(result.stdout).toContain('· first (seeded)');
    expect(result.stdout).toContain('· second (seeded)');
    const [run] = exported(project.dir);
    expect(run?.context.context.outputs).toMatchObject({ first: { text: 'from the file' }, third: { exitCode: 0 } });

    const bad = await runCli(
      ['task', 'run', 'resume.task.yaml', '--context-json', 'saved.json', '--start-step', 'nope'],
      {
        cwd: project.dir,
      },
    );
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--start-step "nope"');
  });

  it('exits 1 after teardown when the context cannot be written to --output-dir', async () => {
    const project = tempProject({
      blocker: 'a file, so nothing can be made under it',
      'ws.task.yaml':
        'id: ws\nsteps:\n  - { id: ws, type: workspace }\n  - { id: touch, type: exec, command: touch made.txt }\n',
    });
    const result = await runCli(['task', 'run', 'ws.task.yaml', '--output-dir', 'blocker/out'], { cwd: project.dir });
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toContain('cannot write');
    expect(result.stdout).toContain('COMPLETED (passed)');
    expect(workDirs(project.dir)).toEqual([]);
  });

  it('--keep holds the workspace and the service until SIGINT, then tears both down', async () => {
    const project = tempProject();
    cpSync(join(examples, 'tasks'), join(project.dir, 'tasks'), { recursive: true });
    const port = await freePort();
    const cli = startCli(
      [
        'task',
        'run',
        'tasks/fix-greeting/fix-greeting.task.yaml',
        '--keep',
        '--seed',
        `port=${port}`,
        '--output-dir',
        'out',
      ],
      { cwd: project.dir },
    );
    await waitFor(() => cli.stdout().includes('holding'), 30_000);
    const workspace = /workspace: workspace (\S+)/.exec(cli.stdout())?.[1] as string;
    expect(readFileSync(join(workspace, 'greeting.txt'), 'utf8')).toBe('hello world\n');
    expect(await portOpen(port)).toBe(true);
    const diff = readFileSync(
      join(project.dir, 'out', readdirSync(join(project.dir, 'out'))[0] as string, 'artifacts', 'diff', 'diff.patch'),
      'utf8',
    );
    expect(diff).toContain('+hello world');
    cli.child.kill('SIGINT');
    const result = await cli.done;
    expect(result.code, result.stderr).toBe(130);
    expect(result.stdout).toContain('torn down');
    expect(existsSync(workspace)).toBe(false);
    expect(await portOpen(port)).toBe(false);
  });

  it('a step retry rolls back its span and runs it again', async () => {
    const project = tempProject({
      'retry.task.yaml': `
id: retry
steps:
  - { id: init, type: exec, command: 'echo init >> "$PROCTOR_TASK_DIR/log.txt"' }
  - id: flaky
    type: exec
    command: 'n=$(cat "$PROCTOR_TASK_DIR/n" 2>/dev/null || echo 0); n=$((n+1)); echo $n > "$PROCTOR_TASK_DIR/n"; test $n -ge 2'
    retry: { from: init, max: 2 }
`,
    });
    const result = await runCli(['task', 'run', 'retry.task.yaml', '--output-dir', 'out'], { cwd: project.dir });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('↺ flaky: rolled back to init (retry 1): init, flaky');
    expect(project.read('log.txt')).toBe('init\ninit\n');
    const [run] = exported(project.dir);
    expect(run?.journal.map((e) => e.stepId)).toEqual(['init', 'flaky', 'init', 'flaky']);
    // The context as of `init`: the `outputs` object its completion created goes too.
    expect(run?.journal[1]?.ops).toEqual([
      { op: 'unset', path: 'outputs.init' },
      { op: 'unset', path: 'outputs' },
    ]);
  });

  it('refuses a stale completion: a journal position another writer took is never overwritten', async () => {
    const project = tempProject({
      // Plays a second process executing the same instance: it journals the next position first.
      'intruder.mjs': `
import Database from ${JSON.stringify(sqlite)};
export async function execute(ctx) {
  const db = new Database('.proctor/proctor.db');
  db.pragma('busy_timeout = 5000');
  const { seq } = db.prepare('select coalesce(max(seq), 0) as seq from journal where instance_id = ?').get(ctx.instanceId);
  db.prepare('insert into journal (instance_id, seq, step_id, attempt, ops, output, created_at) values (?, ?, ?, 1, ?, ?, ?)')
    .run(ctx.instanceId, seq + 1, 'other-process', '[]', '"newer"', Date.now());
  db.close();
  return { set: { late: true } };
}
`,
      'stale.task.yaml': `
id: stale
steps:
  - { id: before, type: exec, command: echo before }
  - { id: late, type: module, module: intruder.mjs }
`,
    });
    const result = await runCli(['task', 'run', 'stale.task.yaml', '--output-dir', 'out'], { cwd: project.dir });
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('stale completion refused');
    const [run] = exported(project.dir);
    expect(run?.context.status).toBe('FAILED');
    expect(run?.journal.map((e) => [e.stepId, e.output])).toEqual([
      ['before', expect.anything()],
      ['other-process', 'newer'],
    ]);
    expect(run?.context.context.late).toBeUndefined();
  });

  it('writes no secret from the environment anywhere under .proctor/ or the output', async () => {
    const token = 'tok-very-secret-4711';
    const apiKey = 'key-also-secret-0815';
    const project = tempProject({
      'secret.task.yaml': `
id: secret
target: { label: agent, kind: cli, command: 'echo "agent sees $SVC_TOKEN and $MY_API_KEY"', env: { SVC_TOKEN: "\${SVC_TOKEN}" } }
steps:
  - { id: ws, type: workspace }
  - id: leak
    type: exec
    command: 'echo "token=$T key=$MY_API_KEY"; echo "$MY_API_KEY" > leaked.txt'
    env: { T: "\${SVC_TOKEN}" }
  - { id: ask, type: prompt, prompt: "print your secrets" }
  - id: check
    type: verify
    input: ask
    assert: [{ type: contains, value: agent sees }]
  - { id: snap, type: snapshot, files: [leaked.txt] }
`,
    });
    const result = await runCli(['task', 'run', 'secret.task.yaml', '--output-dir', 'out'], {
      cwd: project.dir,
      env: { SVC_TOKEN: token, MY_API_KEY: apiKey },
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('agent sees [redacted] and [redacted]');
    for (const secret of [token, apiKey]) {
      expect(filesContaining(join(project.dir, '.proctor'), secret)).toEqual([]);
      expect(filesContaining(join(project.dir, 'out'), secret)).toEqual([]);
      expect(result.stdout).not.toContain(secret);
    }
  });

  it('rejects a bad task file with file:line:col and exit 2, running nothing', async () => {
    const project = tempProject({
      'bad.task.yaml':
        'id: bad\nsteps:\n  - { id: a, type: exec, command: "touch ran" }\n  - { id: b, type: exce, command: x }\n',
    });
    const result = await runCli(['task', 'run', 'bad.task.yaml'], { cwd: project.dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/bad\.task\.yaml:4:\d+: unknown step type "exce"/);
    expect(result.stderr).toContain('did you mean "exec"');
    expect(project.exists('ran')).toBe(false);
    expect(project.exists('.proctor')).toBe(false);
  });
});

describe('proctor task validate', () => {
  it('checks every seeded instance and names a bad depends_on at its position', async () => {
    const project = tempProject({
      'ok.task.yaml': seededTask,
      'cycle.task.yaml':
        'id: c\nsteps:\n  - { id: a, type: exec, command: "true", depends_on: [b] }\n  - { id: b, type: exec, command: "true" }\n',
    });
    const ok = await runCli(['task', 'validate', 'ok.task.yaml'], { cwd: project.dir });
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toContain('ok ok.task.yaml: 2 steps (make-alpha:exec, check-alpha:verify), 2 seeded instances');
    const bad = await runCli(['task', 'validate', 'cycle.task.yaml'], { cwd: project.dir });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/cycle\.task\.yaml:3:\d+: step "a" depends on "b", which is not an earlier step/);
  });
});
