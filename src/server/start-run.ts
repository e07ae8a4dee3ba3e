import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sleep } from '../sleep.js';
import type { Store } from '../store/store.js';

const cli = fileURLToPath(new URL('../../bin/proctor.js', import.meta.url));

export type StartResult = { ok: true; groupId: string; log: string } | { ok: false; message: string };

const escapeRegex = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Starts an eval run exactly as a user would from the project root: `proctor eval run FILES`, which submits
 * to the configured runner. The process outlives the server (detached, output to a log under .proctor/), and
 * its run is found in the store by the submitting pid, the owner its QUEUED runs name.
 */
export const startEvalRun = async (
  store: Store,
  root: string,
  evals: readonly string[],
  targets: readonly string[],
): Promise<StartResult> => {
  const logDir = path.join(root, '.proctor', 'serve');
  mkdirSync(logDir, { recursive: true });
  const log = path.join(logDir, `eval-run-${Date.now()}.log`);
  const fd = openSync(log, 'a');
  const args = [cli, 'eval', 'run', ...evals, '--quiet'];
  if (targets.length) args.push('--filter-targets', `^(${targets.map(escapeRegex).join('|')})$`);
  const child = spawn(process.execPath, args, { cwd: root, detached: true, stdio: ['ignore', fd, fd] });
  closeSync(fd);
  child.unref();
  let exitCode: number | null = null;
  child.on('exit', (code) => {
    exitCode = code ?? 1;
  });
  const until = Date.now() + 15_000;
  while (Date.now() < until) {
    const mine = (await store.listRuns({ limit: 20 })).find((r) => r.owner?.pid === child.pid);
    if (mine) return { ok: true, groupId: mine.groupId, log };
    if (exitCode !== null) return { ok: false, message: readFileSync(log, 'utf8').trim() || `exit ${exitCode}` };
    await sleep(100);
  }
  return { ok: false, message: `the run did not appear in the store within 15 s; see ${log}` };
};
