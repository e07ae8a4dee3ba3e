import { loadProjectConfig } from '../../plan/config.js';
import { fingerprinter } from '../../plan/fingerprint.js';
import { loadEvalPaths } from '../../plan/load-eval.js';
import { expandMatrix } from '../../plan/matrix.js';
import { exitCodes } from '../exit-codes.js';

/** `proctor eval validate`: load and expand everything `eval run` would, run nothing, write nothing. */
export const evalValidate = (paths: string[]): number => {
  const cwd = process.cwd();
  const config = loadProjectConfig(cwd, process.env);
  const evals = loadEvalPaths(paths.length ? paths : [cwd], config, process.env);
  const fingerprints = fingerprinter(config.root, process.env);
  for (const spec of evals) {
    const cases = expandMatrix([spec], fingerprints).length;
    process.stdout.write(
      `ok ${spec.path}: ${spec.tests.length} tests × ${spec.prompts.length} prompts × ${spec.targets.length} targets = ${cases} cases\n`,
    );
  }
  return exitCodes.ok;
};
