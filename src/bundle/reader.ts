import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { IndexRow } from './row.js';
import { indexFile } from './writer.js';

export interface IndexRead {
  rows: IndexRow[];
  /** Lines that are not complete JSON rows (a torn last line after a crash): reported, never fatal. */
  skipped: { line: number; text: string }[];
}

/** Reads every row of a bundle's index.jsonl in order; a missing index is an empty bundle. */
export const readIndex = (dir: string): IndexRead => {
  const file = join(dir, indexFile);
  const result: IndexRead = { rows: [], skipped: [] };
  if (!existsSync(file)) return result;
  const lines = readFileSync(file, 'utf8').split('\n');
  for (let i = 0; i < lines.length; i++) {
    const text = lines[i] as string;
    if (text === '') continue;
    try {
      const row = JSON.parse(text) as IndexRow;
      if (typeof row.key !== 'string' || typeof row.outcome !== 'string') throw new Error('not a row');
      result.rows.push(row);
    } catch {
      result.skipped.push({ line: i + 1, text: text.slice(0, 200) });
    }
  }
  return result;
};

/** The latest row per key: the one that counts for every reader (summary, show, compare, resume). */
export const latestByKey = (rows: readonly IndexRow[]): Map<string, IndexRow> => {
  const latest = new Map<string, IndexRow>();
  for (const row of rows) latest.set(row.key, row);
  return latest;
};
