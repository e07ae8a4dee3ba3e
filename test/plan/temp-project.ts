import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { InputError } from '../../src/errors.js';

/** A throwaway project directory: `files` maps relative paths to contents. */
export const tempProject = (files: Record<string, string>): string => {
  const root = mkdtempSync(path.join(tmpdir(), 'proctor-plan-'));
  for (const [rel, text] of Object.entries(files)) {
    const file = path.join(root, rel);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, text);
  }
  return root;
};

/** Runs `fn`, expects an InputError, and returns it so a test can check its position and hint. */
export const inputError = (fn: () => unknown): InputError => {
  try {
    fn();
  } catch (error) {
    if (error instanceof InputError) return error;
    throw error;
  }
  throw new Error('expected an InputError, but nothing was thrown');
};
