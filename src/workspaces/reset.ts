import { rm } from 'node:fs/promises';
import path from 'node:path';
import { git } from './git.js';
import { restoreGitDir } from './git-dir-store.js';
import { type RepoBaseline, repoDir, rootPathspec, type SlotRef } from './slot.js';

/**
 * Puts a git directory back first (objects, refs, reflogs, HEAD, index, config and hooks: the case's config
 * must not steer the commands below), then the files: `read-tree --reset -u` checks the baseline out without
 * writing a reflog entry or ORIG_HEAD as `reset --hard` would, and `clean -ffdx` removes every untracked and
 * ignored file (nested repositories included: `-ff`).
 */
const resetTree = async (
  gitDir: string,
  workTree: string,
  base: { commit: string; store: string },
  pathspec: string[],
): Promise<void> => {
  await restoreGitDir(gitDir, base.store);
  const o = { gitDir, workTree };
  await git(['read-tree', '--reset', '-u', base.commit], o);
  await git(['clean', '-ffdxq', '--', ...pathspec], o);
};

const resetRepo = (slot: SlotRef, base: RepoBaseline): Promise<void> => {
  const dir = repoDir(slot, base.path);
  return resetTree(`${dir}/.git`, dir, base, ['.']);
};

/** Puts the root's files outside the repositories back to their baseline. */
const resetRoot = async (slot: SlotRef, root: NonNullable<SlotRef['root']>): Promise<void> => {
  // git never counts a `.git` as content, so a `git init` at the root would survive `clean`.
  await rm(path.join(slot.path, '.git'), { recursive: true, force: true });
  await resetTree(root.gitDir, slot.path, root, rootPathspec(slot.repos));
};

/**
 * Resets a slot to its baseline before it is lent again. Throws when any part fails (a deleted `.git`, a
 * corrupt index): the pool then discards the slot rather than lend it dirty.
 */
export const resetSlot = async (slot: SlotRef): Promise<void> => {
  for (const repo of slot.repos) await resetRepo(slot, repo);
  if (slot.root) await resetRoot(slot, slot.root);
};
