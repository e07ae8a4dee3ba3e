import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** A throwaway project on disk: `files` maps relative paths to contents. */
export interface TempProject {
  dir: string;
  path(rel: string): string;
  write(rel: string, text: string): void;
  read(rel: string): string;
  exists(rel: string): boolean;
  remove(): void;
}

export const tempProject = (files: Record<string, string> = {}): TempProject => {
  const dir = mkdtempSync(path.join(tmpdir(), 'proctor-test-'));
  const project: TempProject = {
    dir,
    path: (rel) => path.join(dir, rel),
    write: (rel, text) => {
      const file = path.join(dir, rel);
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, text);
    },
    read: (rel) => readFileSync(path.join(dir, rel), 'utf8'),
    exists: (rel) => existsSync(path.join(dir, rel)),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
  for (const [rel, text] of Object.entries(files)) project.write(rel, text);
  return project;
};

/** The one bundle under `.proctor/results` of a project that ran one eval run. */
export const onlyBundle = (p: TempProject): string => {
  const dir = p.path('.proctor/results');
  const [id] = readdirSync(dir);
  return path.join(dir, id as string);
};

/** The rows of a bundle's index.jsonl, in order (earlier rows of a key included). */
export const indexRows = <Row = Record<string, unknown>>(bundle: string): Row[] =>
  readFileSync(path.join(bundle, 'index.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Row);
