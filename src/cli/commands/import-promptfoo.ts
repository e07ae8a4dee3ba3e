import { importPromptfoo } from '../../plan/promptfoo/import-config.js';
import { exitCodes } from '../exit-codes.js';

/** `proctor import promptfoo CONFIG`: the native eval and proctor.toml, written beside the config. */
export const importPromptfooCommand = (file: string): number => {
  const { evalFile, configFile, notes } = importPromptfoo(file, process.env);
  process.stdout.write(`wrote ${evalFile}\nwrote ${configFile}\n`);
  for (const note of notes) process.stderr.write(`note: ${note}\n`);
  return exitCodes.ok;
};
