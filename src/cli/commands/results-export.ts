import { once } from 'node:events';
import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { exportBytes, exporters, exportFormats, isExportFormat } from '../../bundle/exporters.js';
import { visitLatest } from '../../bundle/row-visitor.js';
import { InputError } from '../../errors.js';
import { loadProjectConfig } from '../../plan/config.js';
import { selectBundle } from '../../plan/select-bundle.js';
import { exitCodes } from '../exit-codes.js';
import { batched, exportSource, writeExportFile } from '../export-file.js';

const toStdout = async (pieces: Iterable<string | Buffer>): Promise<void> => {
  let closed = false;
  // A reader that stops early (`| head`) closes the pipe: stop writing instead of dying of EPIPE.
  const stop = (): void => {
    closed = true;
  };
  process.stdout.on('error', stop);
  for (const piece of pieces) {
    if (closed) return;
    // Waiting for the pipe to drain keeps a large export from piling up in memory behind a slow reader.
    if (!process.stdout.write(piece)) await once(process.stdout, 'drain').catch(stop);
  }
};

const outputFile = (cwd: string, output: string): string => {
  const file = resolve(cwd, output);
  if (existsSync(file) && statSync(file).isDirectory()) {
    throw new InputError(`-o ${output} is a directory`, undefined, 'give a file path, e.g. -o results.xml');
  }
  return file;
};

/** `proctor results export RUN --format F [-o FILE]`: stdout by default; with -o, the file appears whole or not at all. */
export const resultsExport = async (selector: string, opts: { format: string; output?: string }): Promise<number> => {
  const cwd = process.cwd();
  if (!isExportFormat(opts.format)) {
    throw new InputError(
      `unknown export format "${opts.format}"`,
      undefined,
      `use one of: ${exportFormats.join(', ')}`,
    );
  }
  const dir = selectBundle(selector, loadProjectConfig(cwd, process.env), cwd);
  const file = opts.output === undefined ? undefined : outputFile(cwd, opts.output);
  const pass = (await exporters[opts.format].load())(exportSource(dir));
  try {
    visitLatest(dir, [pass]);
  } catch (error) {
    pass.close();
    throw error;
  }
  if (file) {
    writeExportFile(pass, file);
    process.stderr.write(`wrote ${file}\n`);
    return exitCodes.ok;
  }
  try {
    await toStdout(batched(exportBytes(pass.document())));
  } finally {
    pass.close();
  }
  return exitCodes.ok;
};
