import { git, gitPlain } from './git.js';
import { type RepoBaseline, repoDir, rootPathspec, type SlotRef } from './slot.js';

const gitDirOf = (dir: string): string => `${dir}/.git`;

/** Every ref of a repository: `refs/… → object`. */
export const readRefs = async (dir: string): Promise<Record<string, string>> => {
  const out = await git(['for-each-ref', '--format=%(objectname) %(refname)'], {
    gitDir: gitDirOf(dir),
    workTree: dir,
  });
  return Object.fromEntries(
    out
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const [sha, ref] = line.split(' ');
        return [ref as string, sha as string];
      }),
  );
};

/**
 * A repository's baseline after setup. When setup changed it (`npm ci` writing node_modules, a build writing
 * dist/), those files are committed on top, ignored ones included: a reset is then one `reset --hard` plus
 * `clean -ffdx`, and what setup made survives it. A clean repository keeps its checked-out commit.
 */
export const repoBaseline = async (slot: Pick<SlotRef, 'path'>, repoPath: string): Promise<RepoBaseline> => {
  const dir = repoDir(slot, repoPath);
  const o = { gitDir: gitDirOf(dir), workTree: dir };
  const dirty = (await git(['status', '--porcelain', '--ignored', '-z'], o)) !== '';
  if (dirty) {
    await git(['add', '-A', '-f'], o);
    await git(['commit', '-q', '--no-verify', '-m', 'proctor: workspace baseline (after setup)'], o);
  }
  const commit = (await git(['rev-parse', 'HEAD'], o)).trim();
  const head = await git(['symbolic-ref', '-q', 'HEAD'], o).then(
    (s) => s.trim(),
    () => null,
  );
  return { path: repoPath, commit, head, refs: await readRefs(dir) };
};

/**
 * The root's files outside the repositories, committed to a repository beside the workspace (never inside
 * it, where an agent would see it). Restoring the root is then the same reset and clean as a repository's.
 */
export const rootBaseline = async (
  slot: Pick<SlotRef, 'path'>,
  gitDir: string,
  repos: readonly { path: string }[],
): Promise<{ gitDir: string; commit: string }> => {
  const o = { gitDir, workTree: slot.path };
  await gitPlain(['init', '-q', '--bare', gitDir], slot.path);
  // -f: a template's own .gitignore must not keep its files out of the baseline.
  await git(['add', '-A', '-f', '--', ...rootPathspec(repos)], o);
  await git(['commit', '-q', '--no-verify', '--allow-empty', '-m', 'proctor: workspace root baseline'], o);
  return { gitDir, commit: (await git(['rev-parse', 'HEAD'], o)).trim() };
};
