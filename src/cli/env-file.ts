import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { InputError } from '../errors.js';

/**
 * `--env-file FILE`: KEY=value lines into this process's environment before the config is read, as dotenv
 * does: a variable already set in the environment wins over the file.
 */
export const loadEnvFile = (cwd: string, file: string): void => {
  const path = resolve(cwd, file);
  if (!existsSync(path)) {
    throw new InputError(`--env-file ${file}: no such file`, undefined, 'give the path of a KEY=value file, e.g. .env');
  }
  process.loadEnvFile(path);
};
