import { cp, mkdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { CanceledError, ProctorError } from '../errors.js';
import { repoBaseline, rootBaseline } from './baseline.js';
import { git, gitPlain } from './git.js';
import { repoDir, type SlotRef, slotPaths } from './slot.js';
import type { ResolvedSpec, SetupCommand } from './spec.js';

export interface MaterialiseOptions {
  /** The environment of a setup command: the process's, plus the command's own (`${VAR}` resolved by the caller). */
  env: (command: SetupCommand) => Record<string, string>;
  signal: AbortSignal;
}

const tailChars = 4000;
const tail = (s: string): string => (s.length > tailChars ? `…${s.slice(-tailChars)}` : s);

const fail = (message: string, cause?: unknown): ProctorError =>
  new ProctorError('setup_failed', `workspace: ${message}`, cause === undefined ? {} : { cause });

const checkout = async (dir: string, ref: string | null, signal: AbortSignal): Promise<void> => {
  const o = { gitDir: `${dir}/.git`, workTree: dir, signal };
  if (ref === null) {
    // The clone skipped its checkout so that a ref is checked out once; without one, HEAD's tree is.
    await git(['reset', '-q', '--hard'], o);
    return;
  }
  // A branch only the remote has is `origin/<ref>`; a tag or commit resolves as written.
  const sha = await git(['rev-parse', '--verify', '-q', `${ref}^{commit}`], o).catch(() =>
    git(['rev-parse', '--verify', '-q', `origin/${ref}^{commit}`], o).catch(() => {
      throw fail(`ref "${ref}" not found in ${dir}`);
    }),
  );
  await git(['checkout', '-q', '--detach', sha.trim()], o);
};

const runSetup = async (s: SetupCommand, workspace: string, o: MaterialiseOptions): Promise<void> => {
  const [file, args] =
    typeof s.command === 'string' ? ['/bin/sh', ['-c', s.command]] : [s.command[0] as string, s.command.slice(1)];
  // Loaded on first use: execa costs ~90 ms of CPU that a command starting no process should not pay.
  const { execa } = await import('execa');
  const r = await execa(file, args, {
    cwd: path.resolve(workspace, s.cwd),
    env: { ...o.env(s), PROCTOR_WORKSPACE: workspace },
    extendEnv: false,
    stdin: 'ignore',
    reject: false,
    all: true,
    timeout: s.timeoutS * 1000,
    cancelSignal: o.signal,
  });
  if (o.signal.aborted) throw new CanceledError();
  if (r.exitCode !== 0) {
    const how = r.timedOut ? `timed out after ${s.timeoutS}s` : (r.exitCode ?? r.shortMessage);
    throw fail(`setup \`${[s.command].flat().join(' ')}\` failed (${how}): ${tail(String(r.all ?? ''))}`);
  }
};

/**
 * Makes a slot from nothing: each repository cloned and checked out, the template copied over, the setup
 * commands run, then the baseline recorded. Any failure is `setup_failed` (infrastructure: retried, never a
 * graded failure); the caller removes the half-made directory.
 */
export const materialise = async (
  spec: ResolvedSpec,
  slot: Pick<SlotRef, 'pool' | 'id' | 'dir'>,
  o: MaterialiseOptions,
): Promise<SlotRef> => {
  const paths = slotPaths(slot.dir);
  const ref = { ...slot, path: paths.workspace };
  await mkdir(paths.workspace, { recursive: true });
  try {
    for (const r of spec.repos) {
      const dir = repoDir(ref, r.path);
      await mkdir(path.dirname(dir), { recursive: true });
      await gitPlain(['clone', '-q', '--no-checkout', r.url, dir], slot.dir, o.signal);
      await checkout(dir, r.ref, o.signal);
    }
    if (spec.template !== null) {
      const isDir = await stat(spec.template).then(
        (s) => s.isDirectory(),
        () => false,
      );
      if (!isDir) throw fail(`template ${spec.template} is not a directory`);
      await cp(spec.template, paths.workspace, { recursive: true, force: true });
    }
    for (const s of spec.setup) await runSetup(s, paths.workspace, o);
    const repos = [];
    for (const [i, r] of spec.repos.entries()) repos.push(await repoBaseline(ref, r.path, paths.repoStore(i)));
    const atRoot = spec.repos.some((r) => r.path === '.');
    const root = atRoot ? null : await rootBaseline(ref, paths.rootGit, paths.rootStore, spec.repos);
    return { ...ref, repos, root };
  } catch (error) {
    if (o.signal.aborted) throw new CanceledError();
    if (error instanceof ProctorError) throw error;
    throw fail((error as Error).message, error);
  }
};
