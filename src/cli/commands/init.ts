import { initProject } from '../../plan/init-project.js';
import { exitCodes } from '../exit-codes.js';

/** `proctor init`: a starter project in the current directory. */
export const init = (): number => {
  for (const file of initProject(process.cwd())) process.stdout.write(`wrote ${file}\n`);
  process.stdout.write('next: proctor eval run evals\n');
  return exitCodes.ok;
};
