import { copyFile, readdir, readFile, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { git } from './git.js';
import { repoDir, rootPathspec, type SlotRef } from './slot.js';

/** What a case left in its workspace: the diff against the baseline and the files the spec names. */
export interface WorkspaceCapture {
  /** Unified diff, new files included (ignored files are not); null when it could not be taken. */
  diff: string | null;
  files: Record<string, string>;
  /** Named files larger than the spec's `max_bytes`, or unreadable. */
  skipped: string[];
  /** Why the diff is null. */
  error?: string;
}

// A diff larger than this is cut: it goes into the journal and the bundle, which are not blob stores.
const maxDiffChars = 2_000_000;

/**
 * `git diff` of the work tree against `commit`, through a copy of the index: `add -A` then sees new files
 * without touching the index the case left (a kept workspace stays as it was), and the copy keeps the
 * stat cache, so only changed files are hashed.
 */
const diffAgainst = async (
  gitDir: string,
  workTree: string,
  commit: string,
  pathspec: string[],
  prefix: string,
): Promise<string> => {
  const index = path.join(gitDir, `proctor-capture-${process.pid}.index`);
  await copyFile(path.join(gitDir, 'index'), index).catch(() => {});
  const o = { gitDir, workTree, env: { GIT_INDEX_FILE: index } };
  try {
    await git(['add', '-A', '--', ...pathspec], o);
    return await git(
      [
        'diff',
        '--cached',
        '--no-color',
        '--no-ext-diff',
        `--src-prefix=a/${prefix}`,
        `--dst-prefix=b/${prefix}`,
        commit,
      ],
      o,
    );
  } finally {
    await rm(index, { force: true });
  }
};

/** Appends to `out` the files at `rel` under `root` (a directory's, sorted, recursively); a missing path adds none. */
export const listFiles = async (root: string, rel: string, out: string[]): Promise<void> => {
  const s = await stat(path.join(root, rel)).catch(() => undefined);
  if (!s) return;
  if (!s.isDirectory()) {
    out.push(rel);
    return;
  }
  for (const name of (await readdir(path.join(root, rel))).sort()) await listFiles(root, path.join(rel, name), out);
};

/** Reads the named files, each at most `maxBytes`; a name that climbs out of the workspace is skipped. */
const namedFiles = async (slot: SlotRef, names: readonly string[], maxBytes: number) => {
  const found: string[] = [];
  for (const n of names) if (!path.normalize(n).startsWith('..')) await listFiles(slot.path, path.normalize(n), found);
  const files: Record<string, string> = {};
  const skipped: string[] = [];
  for (const rel of found) {
    const full = path.join(slot.path, rel);
    const size = (await stat(full)).size;
    const text = size > maxBytes ? undefined : await readFile(full, 'utf8').catch(() => undefined);
    if (text === undefined) skipped.push(rel);
    else files[rel.split(path.sep).join('/')] = text;
  }
  return { files, skipped };
};

/** Takes a case's diff and named files before its slot is reset. Never throws: a capture must not fail a case. */
export const captureSlot = async (
  slot: SlotRef,
  names: readonly string[],
  maxBytes: number,
): Promise<WorkspaceCapture> => {
  const { files, skipped } = await namedFiles(slot, names, maxBytes).catch(() => ({ files: {}, skipped: [...names] }));
  try {
    const parts: string[] = [];
    if (slot.root)
      parts.push(await diffAgainst(slot.root.gitDir, slot.path, slot.root.commit, rootPathspec(slot.repos), ''));
    for (const r of slot.repos) {
      const dir = repoDir(slot, r.path);
      parts.push(await diffAgainst(`${dir}/.git`, dir, r.commit, ['.'], r.path === '.' ? '' : `${r.path}/`));
    }
    const diff = parts.join('');
    return {
      diff:
        diff.length > maxDiffChars
          ? `${diff.slice(0, maxDiffChars)}\n… diff cut at ${maxDiffChars} characters\n`
          : diff,
      files,
      skipped,
    };
  } catch (error) {
    return { diff: null, files, skipped, error: (error as Error).message };
  }
};
