import path from 'node:path';

/** A repository of a slot at its baseline: the commit, and where its git directory's baseline is kept. */
export interface RepoBaseline {
  /** Inside the workspace, POSIX, `.` for the root. */
  path: string;
  commit: string;
  /** The git directory at baseline, outside the workspace (see git-dir-store.ts). */
  store: string;
}

/**
 * A materialised workspace slot as plain data: it is recorded in the run's context, so teardown from the stored
 * instance (another process, after `--keep`) knows what to remove.
 */
export interface SlotRef {
  /** The pool's key (a hash of the resolved spec). */
  pool: string;
  id: string;
  /** The slot's own directory: the workspace, the root's baseline repository and the owner file. */
  dir: string;
  /** The workspace steps run in. */
  path: string;
  repos: RepoBaseline[];
  /** The baseline of the root's files outside the repositories, as a repository beside the workspace. */
  root: { gitDir: string; commit: string; store: string } | null;
}

/** Where a slot keeps its workspace, the root's baseline repository and each git directory's baseline. */
export const slotPaths = (dir: string) => ({
  workspace: path.join(dir, 'ws'),
  rootGit: path.join(dir, 'root.git'),
  rootStore: path.join(dir, 'baseline', 'root'),
  /** Of the `index`th repository of the spec. */
  repoStore: (index: number) => path.join(dir, 'baseline', String(index)),
});

export const repoDir = (slot: Pick<SlotRef, 'path'>, repoPath: string): string =>
  repoPath === '.' ? slot.path : path.join(slot.path, repoPath);

/** The pathspec that keeps the root's baseline repository out of the repositories' own trees. */
export const rootPathspec = (repos: readonly { path: string }[]): string[] => [
  '.',
  ...repos.map((r) => `:(exclude)${r.path}`),
];
