// `proctor runs list|show|cancel|gc` through the built CLI, against runs a separate runner-host process owns.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunRecord, RunStatus } from '../../src/store/store.js';
import { runCli } from '../support/cli.js';
import { tempProject } from '../support/project.js';
import { runReaches } from '../support/run-records.js';
import type { HostConfig } from '../support/runner-host.js';
import { type RunnerHost, startRunnerHost } from '../support/runner-host-process.js';
import { openTempStore, type TempStore } from '../support/temp-store.js';

describe('proctor runs', () => {
  let temp: TempStore;
  let dir: string;
  const hosts: RunnerHost[] = [];
  const host = async (runs: HostConfig['runs']): Promise<RunnerHost> => {
    const h = await startRunnerHost({ store: temp.file, runs });
    hosts.push(h);
    return h;
  };
  const cli = (...args: string[]) => runCli(['runs', ...args], { cwd: dir });
  const statusIs = (runId: string, status: RunStatus): Promise<RunRecord> => runReaches(temp.store, runId, status);

  beforeEach(async () => {
    temp = await openTempStore();
    const project = tempProject({ 'proctor.toml': `[store]\nurl = "sqlite:${temp.file}"\n` });
    dir = project.dir;
  });
  afterEach(async () => {
    await Promise.all(hosts.splice(0).map((h) => h.kill()));
    await temp.remove();
  });

  it("cancel: says plainly it does not own another process's run, and its owner stops it", async () => {
    const owner = await host([{ runId: 'long', delayMs: 60_000 }]);
    await statusIs('long', 'RUNNING');
    const result = await cli('cancel', 'long');
    expect(result.stdout).toContain(`this process does not own run long (its owner is`);
    expect(result.stdout).toContain(`pid ${owner.pid}); asked the owner to cancel it`);
    expect(result.stdout).toContain('run long CANCELED');
    expect(result.code).toBe(0);
    expect((await cli('cancel', 'long')).stdout).toContain('run long is already CANCELED; nothing to cancel');
  });

  it('cancel: an unknown run is bad input', async () => {
    const result = await cli('cancel', 'nope');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('no run "nope"');
    expect(result.stderr).toContain('fix: see `proctor runs list`');
  });

  it('gc: fails the runs of a killed process, reports them, and spares a live one', async () => {
    const [live, doomed] = await Promise.all([
      host([{ runId: 'alive', delayMs: 60_000 }]),
      host([
        { runId: 'dead-running', delayMs: 60_000 },
        { runId: 'dead-queued', delayMs: 0 },
      ]),
    ]);
    await statusIs('alive', 'RUNNING');
    await statusIs('dead-running', 'RUNNING');
    await doomed.kill();
    const cancel = await cli('cancel', 'dead-running', '--wait', '0');
    expect(cancel.code).toBe(1);
    expect(cancel.stdout).toContain('its owner');
    expect(cancel.stdout).toContain('is gone');

    const gc = await cli('gc', '--json');
    expect(gc.code).toBe(0);
    const report = JSON.parse(gc.stdout) as { orphans: { run_id: string; status: string; reason: string }[] };
    expect(report.orphans.map((o) => o.run_id).sort()).toEqual(['dead-queued', 'dead-running']);
    expect(report.orphans[0]?.reason).toContain(`pid ${doomed.pid} has exited`);
    expect((await temp.store.getRun('alive'))?.owner?.pid).toBe(live.pid);
    expect((await temp.store.getRun('alive'))?.status).toBe('RUNNING');
    expect((await cli('gc')).stdout).toBe('no orphaned runs\n');
  });

  it('list filters by status; show prints owner, timings, steps and journal', async () => {
    await host([{ runId: 'quick', delayMs: 0 }]).then((h) => h.next('done'));
    const list = await cli('list', '--status', 'completed', '--json');
    expect((JSON.parse(list.stdout) as RunRecord[]).map((r) => r.runId)).toEqual(['quick']);
    expect(JSON.parse((await cli('list', '--status', 'running', '--json')).stdout)).toEqual([]);
    const bad = await cli('list', '--status', 'finished');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('fix: use one of QUEUED, RUNNING, COMPLETED, FAILED, CANCELED');

    const show = await cli('show', 'quick');
    expect(show.code).toBe(0);
    expect(show.stdout).toMatch(/status {4}COMPLETED \(passed\)/);
    expect(show.stdout).toMatch(/owner {5}\S+ pid \d+ \(started .*\), seen /);
    expect(show.stdout).toMatch(/\(ran \d+\.\d\d s\)/);
    expect(show.stdout).toMatch(/ {2}ask +prompt +completed +1 +\+\d/);
    expect(show.stdout).toContain('1. ask (attempt 1) set outputs.ask');
  });
});
