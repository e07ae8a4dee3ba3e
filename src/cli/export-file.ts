import { mkdirSync } from 'node:fs';
import { basename, dirname, extname } from 'node:path';
import { writePiecesAtomic } from '../bundle/atomic.js';
import { type ExportFormat, type ExportPass, type ExportSource, exportBytes } from '../bundle/exporters.js';
import { InputError } from '../errors.js';

// Exporters yield small pieces (a table row, a header); writing them in batches of this size keeps syscalls few.
const batchBytes = 64 * 1024;

/** Joins small pieces into batches of about `batchBytes`; a spool's chunks, already large, pass as they are. */
export function* batched(pieces: Iterable<string | Buffer>): Generator<string | Buffer> {
  let batch: string[] = [];
  let size = 0;
  for (const piece of pieces) {
    if (typeof piece !== 'string') {
      if (batch.length) yield batch.join('');
      batch = [];
      size = 0;
      yield piece;
      continue;
    }
    batch.push(piece);
    size += piece.length;
    if (size >= batchBytes) {
      yield batch.join('');
      batch = [];
      size = 0;
    }
  }
  if (batch.length) yield batch.join('');
}

const byExtension: Readonly<Record<string, ExportFormat>> = {
  '.json': 'json',
  '.jsonl': 'jsonl',
  '.csv': 'csv',
  '.xml': 'junit',
  '.html': 'html',
  '.htm': 'html',
  '.md': 'markdown',
};

/** The export format a file's extension names (`--export results.csv`), or bad input naming the choices. */
export const exportFormatOf = (file: string): ExportFormat => {
  const format = byExtension[extname(file).toLowerCase()];
  if (format) return format;
  throw new InputError(
    `--export ${file}: cannot tell the format from the extension "${extname(file)}"`,
    undefined,
    `end the file name with one of ${Object.keys(byExtension).join(', ')} (.xml is JUnit)`,
  );
};

/** An export of the bundle `dir`: its run is named after the folder, and what it skips is a warning on stderr. */
export const exportSource = (dir: string): ExportSource => ({
  dir,
  runId: basename(dir),
  warn: (message) => process.stderr.write(`warning: ${message}\n`),
});

/** Writes an export's document to `file` (the file appears whole or not at all) and removes its spools. */
export const writeExportFile = (pass: ExportPass, file: string): void => {
  try {
    const parts = pass.document();
    mkdirSync(dirname(file), { recursive: true });
    writePiecesAtomic(file, batched(exportBytes(parts)));
  } finally {
    pass.close();
  }
};
