import { writeFile } from 'node:fs/promises';
import path from 'node:path';

// Linux refuses to start a process with one environment string over 128 KiB (E2BIG), and the whole
// environment and argument list share about 2 MiB; half the per-string limit leaves room for the rest.
const maxEnvBytes = 64 * 1024;

/**
 * The environment that hands a case's vars to a child process: `PROCTOR_VARS` holds them as JSON while they
 * fit an environment variable; larger ones are written to `vars.json` in the directory `tempDir` gives (the
 * caller removes it), named by `PROCTOR_VARS_FILE`, and `PROCTOR_VARS` is left unset rather than cut. The
 * other variable is always unset (`undefined`), so neither is inherited from Proctor's own environment (a
 * Proctor run from an exec step). Small vars, the common case, cost no file.
 */
export const varsEnv = async (
  vars: Record<string, unknown>,
  tempDir: () => Promise<string>,
): Promise<{ PROCTOR_VARS: string | undefined; PROCTOR_VARS_FILE: string | undefined }> => {
  const json = JSON.stringify(vars);
  if (Buffer.byteLength(json) <= maxEnvBytes) return { PROCTOR_VARS: json, PROCTOR_VARS_FILE: undefined };
  const file = path.join(await tempDir(), 'vars.json');
  await writeFile(file, json);
  return { PROCTOR_VARS: undefined, PROCTOR_VARS_FILE: file };
};
