import { InputError } from '../../src/errors.js';
import { tempProject as project } from '../support/project.js';

/** A throwaway project directory (see test/support/project.ts): the plan tests need only its path. */
export const tempProject = (files: Record<string, string>): string => project(files).dir;

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
