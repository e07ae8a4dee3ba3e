import { closeSync, constants, fstatSync, lstatSync, openSync, readdirSync, readSync, realpathSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

/** An artifact file of a case folder: its name and size in bytes. */
export interface ArtifactFile {
  name: string;
  size: number;
}

/** The first part of an artifact file, and the whole one's size. */
export interface ArtifactFileHead {
  text: string;
  length: number;
}

/**
 * The real folder of a row's artifacts, when it is inside the bundle: `artifacts` comes from index.jsonl, which
 * may come from anywhere (CI, another machine), so `..`, absolute paths and symlinked folders that lead out of
 * the bundle give nothing.
 */
export const caseFolder = (bundleDir: string, artifacts: unknown): string | undefined => {
  if (typeof artifacts !== 'string' || artifacts === '') return undefined;
  try {
    const root = realpathSync(bundleDir);
    const folder = realpathSync(join(root, artifacts));
    const rel = relative(root, folder);
    return rel && !rel.startsWith('..') && !rel.startsWith(sep) && lstatSync(folder).isDirectory() ? folder : undefined;
  } catch {
    return undefined;
  }
};

/**
 * The manifest of a case folder: its regular files. A symlink is never listed (an agent's workspace can hold
 * `ln -s ~/.ssh/id_rsa`), nor a folder.
 */
export const artifactFiles = (folder: string): ArtifactFile[] => {
  try {
    return readdirSync(folder, { withFileTypes: true })
      .filter((d) => d.isFile())
      .map((d) => ({ name: d.name, size: lstatSync(join(folder, d.name)).size }))
      .sort((a, b) => (a.name < b.name ? -1 : 1));
  } catch {
    return [];
  }
};

const noFollow = constants.O_NOFOLLOW ?? 0;

/**
 * A regular file opened for reading without following a link (a bundle can come from anywhere), and its size;
 * undefined when there is none. The caller closes `fd`.
 */
export const openRegularFile = (path: string): { fd: number; size: number } | undefined => {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | noFollow);
  } catch {
    return undefined;
  }
  const stat = fstatSync(fd);
  if (stat.isFile()) return { fd, size: stat.size };
  closeSync(fd);
  return undefined;
};

/** `length` bytes of `fd` at `position`, fewer only at the end of the file. */
export const readBytes = (fd: number, length: number, position: number): Buffer => {
  const buf = Buffer.alloc(length);
  let got = 0;
  while (got < length) {
    const n = readSync(fd, buf, got, length - got, position + got);
    if (n === 0) break;
    got += n;
  }
  return buf.subarray(0, got);
};

/** The first `chars` characters (all without) of the `bytes` bytes of UTF-8 text at `position`, reading no more. */
export const readTextHead = (fd: number, position: number, bytes: number, chars?: number): string => {
  // UTF-8 takes at most 4 bytes a character: this many bytes hold `chars` characters, whatever they are.
  const head = readBytes(fd, chars === undefined ? bytes : Math.min(bytes, chars * 4), position);
  // A multi-byte character cut at the end decodes as U+FFFD: dropped, it was not what the file said.
  const text = head.toString('utf8').replace(/\uFFFD$/, '');
  return chars === undefined ? text : text.slice(0, chars);
};

/**
 * The first `chars` characters (all without) of the manifest file `name`, reading no more of it than that.
 * A name not in the manifest gives nothing, and the file is opened without following a link, so one swapped
 * for a symlink after listing is refused too.
 */
export const readArtifactHead = (folder: string, name: string, chars?: number): ArtifactFileHead | undefined => {
  if (!artifactFiles(folder).some((f) => f.name === name)) return undefined;
  const file = openRegularFile(join(folder, name));
  if (!file) return undefined;
  try {
    return { text: readTextHead(file.fd, 0, file.size, chars), length: file.size };
  } finally {
    closeSync(file.fd);
  }
};
