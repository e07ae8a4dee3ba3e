import { rm } from 'node:fs/promises';
import path from 'node:path';
import { readRefs } from './baseline.js';
import { git } from './git.js';
import { type RepoBaseline, repoDir, rootPathspec, type SlotRef } from './slot.js';

/**
 * Puts a repository back to its baseline: refs the case made are deleted and moved ones restored (a branch
 * or a stash is a trace too), HEAD re-pointed, then the tree and index reset and every untracked and
 * ignored file removed (nested repositories included: `-ff`).
 */
const resetRepo = async (slot: SlotRef, base: RepoBaseline): Promise<void> => {
  const dir = repoDir(slot, base.path);
  const o = { gitDir: `${dir}/.git`, workTree: dir };
  const now = await readRefs(dir);
  const lines = [
    ...Object.keys(now)
      .filter((ref) => !(ref in base.refs))
      .map((ref) => `delete ${ref}`),
    ...Object.entries(base.refs)
      .filter(([ref, sha]) => now[ref] !== sha)
      .map(([ref, sha]) => `update ${ref} ${sha}`),
  ];
  if (lines.length > 0) await git(['update-ref', '--no-deref', '--stdin'], { ...o, input: `${lines.join('\n')}\n` });
  if (base.head !== null) await git(['symbolic-ref', 'HEAD', base.head], o);
  else await git(['update-ref', '--no-deref', 'HEAD', base.commit], o);
  await git(['reset', '-q', '--hard', base.commit], o);
  await git(['clean', '-ffdxq'], o);
};

/** Puts the root's files outside the repositories back to their baseline. */
const resetRoot = async (slot: SlotRef, root: NonNullable<SlotRef['root']>): Promise<void> => {
  const o = { gitDir: root.gitDir, workTree: slot.path };
  // git never counts a `.git` as content, so a `git init` at the root would survive `clean`.
  await rm(path.join(slot.path, '.git'), { recursive: true, force: true });
  await git(['reset', '-q', '--hard', root.commit], o);
  await git(['clean', '-ffdxq', '--', ...rootPathspec(slot.repos)], o);
};

/**
 * Resets a slot to its baseline before it is lent again. Throws when any part fails (a deleted `.git`, a
 * corrupt index): the pool then discards the slot rather than lend it dirty.
 */
export const resetSlot = async (slot: SlotRef): Promise<void> => {
  for (const repo of slot.repos) await resetRepo(slot, repo);
  if (slot.root) await resetRoot(slot, slot.root);
};
