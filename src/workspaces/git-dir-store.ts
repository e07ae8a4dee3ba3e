import { cp, lstat, mkdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

// A git directory at baseline, kept beside the workspace (never inside it, where an agent would see it): its
// objects, which the live repository borrows through `objects/info/alternates` and git never writes to, and
// a copy of everything else (HEAD, refs, packed-refs, reflogs, index, config, hooks, info). A case's commits,
// stashes, tags, packs and stray objects all land in the repository's own, emptied object directory, and
// every other trace in a file the copy replaces, so a reset is an `rm` and a copy of a few dozen small files:
// no `reflog expire`, no `gc`, no walk of history, whatever the repository's size.

const objectsOf = (store: string): string => path.join(store, 'objects');
const copyOf = (store: string): string => path.join(store, 'git');

/**
 * Moves a git directory's objects into `store` (a rename: no copy), points the repository at them as an
 * alternate, and copies the rest of the directory there. Call once, after the baseline commit.
 */
export const freezeGitDir = async (gitDir: string, store: string): Promise<void> => {
  const objects = path.join(gitDir, 'objects');
  await mkdir(store, { recursive: true });
  await rename(objects, objectsOf(store));
  await mkdir(path.join(objects, 'pack'), { recursive: true });
  await mkdir(path.join(objects, 'info'), { recursive: true });
  await writeFile(path.join(objects, 'info', 'alternates'), `${objectsOf(store)}\n`);
  await cp(gitDir, copyOf(store), { recursive: true, verbatimSymlinks: true });
};

/**
 * Puts a git directory back as `freezeGitDir` left it. Throws when it is no longer a directory (deleted, or
 * replaced by a file or a symlink to elsewhere): the pool then discards the slot rather than guess.
 */
export const restoreGitDir = async (gitDir: string, store: string): Promise<void> => {
  if (!(await lstat(gitDir)).isDirectory()) throw new Error(`${gitDir} is no longer a directory`);
  await rm(gitDir, { recursive: true, force: true });
  await cp(copyOf(store), gitDir, { recursive: true, verbatimSymlinks: true });
};
