import { git, gitPlain } from './git.js';
import { freezeGitDir } from './git-dir-store.js';
import { type RepoBaseline, repoDir, rootPathspec, type SlotRef } from './slot.js';

/**
 * A repository's baseline after setup. When setup changed it (`npm ci` writing node_modules, a build writing
 * dist/), those files are committed on top, ignored ones included: a reset is then a checkout of that commit
 * plus `clean -ffdx`, and what setup made survives it. A clean repository keeps its checked-out commit. Its
 * git directory is then frozen in `store`, so a reset restores the repository itself, not only its files.
 */
export const repoBaseline = async (
  slot: Pick<SlotRef, 'path'>,
  repoPath: string,
  store: string,
): Promise<RepoBaseline> => {
  const dir = repoDir(slot, repoPath);
  const o = { gitDir: `${dir}/.git`, workTree: dir };
  const dirty = (await git(['status', '--porcelain', '--ignored', '-z'], o)) !== '';
  if (dirty) {
    await git(['add', '-A', '-f'], o);
    await git(['commit', '-q', '--no-verify', '-m', 'proctor: workspace baseline (after setup)'], o);
  }
  const commit = (await git(['rev-parse', 'HEAD'], o)).trim();
  await freezeGitDir(o.gitDir, store);
  return { path: repoPath, commit, store };
};

/**
 * The root's files outside the repositories, committed to a repository beside the workspace (never inside
 * it, where an agent would see it). Restoring the root is then the same reset and clean as a repository's.
 */
export const rootBaseline = async (
  slot: Pick<SlotRef, 'path'>,
  gitDir: string,
  store: string,
  repos: readonly { path: string }[],
): Promise<NonNullable<SlotRef['root']>> => {
  const o = { gitDir, workTree: slot.path };
  await gitPlain(['init', '-q', '--bare', gitDir], slot.path);
  // -f: a template's own .gitignore must not keep its files out of the baseline.
  await git(['add', '-A', '-f', '--', ...rootPathspec(repos)], o);
  await git(['commit', '-q', '--no-verify', '--allow-empty', '-m', 'proctor: workspace root baseline'], o);
  const commit = (await git(['rev-parse', 'HEAD'], o)).trim();
  // The root's repository is out of an agent's sight, but each case's capture writes objects into it.
  await freezeGitDir(gitDir, store);
  return { gitDir, commit, store };
};
