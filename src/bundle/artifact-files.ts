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
 * The first `chars` characters (all without) of the manifest file `name`, reading no more of it than that.
 * A name not in the manifest gives nothing, and the file is opened without following a link, so one swapped
 * for a symlink after listing is refused too.
 */
export const readArtifactHead = (folder: string, name: string, chars?: number): ArtifactFileHead | undefined => {
  if (!artifactFiles(folder).some((f) => f.name === name)) return undefined;
  let fd: number;
  try {
    fd = openSync(join(folder, name), constants.O_RDONLY | noFollow);
  } catch {
    return undefined;
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return undefined;
    // UTF-8 takes at most 4 bytes a character: this many bytes hold `chars` characters, whatever they are.
    const want = chars === undefined ? stat.size : Math.min(stat.size, chars * 4);
    const buf = Buffer.alloc(want);
    let got = 0;
    while (got < want) {
      const n = readSync(fd, buf, got, want - got, got);
      if (n === 0) break;
      got += n;
    }
    // A multi-byte character cut at the end decodes as U+FFFD: dropped, it was not what the file said.
    const text = buf.toString('utf8', 0, got).replace(/\uFFFD$/, '');
    return { text: chars === undefined ? text : text.slice(0, chars), length: stat.size };
  } finally {
    closeSync(fd);
  }
};
