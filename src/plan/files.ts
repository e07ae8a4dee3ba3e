import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Path, Source } from './source.js';

/** Root-relative POSIX path: how eval paths appear in identities and how files are named in messages. */
export const displayPath = (file: string, root: string): string => {
  const rel = path.relative(root, file);
  return (rel === '' ? '.' : rel).split(path.sep).join('/');
};

export const isFileRef = (value: string): boolean => value.startsWith('file://');

/** Resolves `file://x` against `baseDir` and reads it; a missing file is an error at the reference. */
export const readFileRef = (source: Source, at: Path, ref: string, baseDir: string): { file: string; text: string } => {
  const file = existingFile(source, at, ref.slice('file://'.length), baseDir);
  return { file, text: readFileSync(file, 'utf8') };
};

/** The absolute path of `rel` (relative to `baseDir`); a missing file is an error at `at`, naming `file://rel`. */
export const existingFile = (source: Source, at: Path, rel: string, baseDir: string): string => {
  const ref = `file://${rel}`;
  const file = path.resolve(baseDir, rel);
  let isFile = false;
  try {
    isFile = statSync(file).isFile();
  } catch {
    // A missing file is reported just below, with its position.
  }
  if (!isFile) {
    throw source.fail(
      at,
      `file not found: ${ref} (looked for ${file})`,
      `create the file, or fix the path: it is relative to ${baseDir}`,
    );
  }
  return file;
};
