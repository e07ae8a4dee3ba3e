import { mkdirSync } from 'node:fs';
import { basename, dirname, extname } from 'node:path';
import { writeFileAtomic } from '../bundle/atomic.js';
import { type ExportFormat, exporters } from '../bundle/exporters.js';
import { InputError } from '../errors.js';

// Exporters yield a piece per case; writing them in batches of this size keeps syscalls few.
const batchBytes = 64 * 1024;

/** Joins small pieces into batches of about `batchBytes`. */
export function* batched(pieces: Iterable<string>): Generator<string> {
  let batch: string[] = [];
  let size = 0;
  for (const piece of pieces) {
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

/** Writes a bundle's export to `file`: the file appears whole or not at all. */
export const writeExportFile = async (dir: string, format: ExportFormat, file: string): Promise<void> => {
  const render = await exporters[format].load();
  const pieces = batched(
    render({ dir, runId: basename(dir), warn: (message) => process.stderr.write(`warning: ${message}\n`) }),
  );
  // Buffers, not one string: a large export can exceed the longest string V8 allows.
  const buffers: Buffer[] = [];
  for (const piece of pieces) buffers.push(Buffer.from(piece));
  mkdirSync(dirname(file), { recursive: true });
  writeFileAtomic(file, Buffer.concat(buffers));
};
