import { existsSync } from 'node:fs';
import path from 'node:path';
import type { CassetteRef } from '../engine/cassette-scope.js';
import { InputError } from '../errors.js';
import { type CassetteMode, cassetteModes } from '../targets/cassette.js';
import type { Env } from './env.js';
import type { PlannedCase } from './matrix.js';

/** Where cassettes live, relative to the project root. */
export const cassettesDir = 'cassettes';

const isMode = (mode: string): mode is CassetteMode => (cassetteModes as readonly string[]).includes(mode);

/**
 * The command's cassette mode: `--cassette`, else `[defaults] cassette`; else, when the project has recorded
 * cassettes, strict `replay` under CI (`CI=true`) and `record-missing` on a laptop; else `off`.
 */
export const cassetteMode = (flag: string | undefined, configured: string | undefined, root: string, env: Env) => {
  const given = flag ?? configured;
  if (given !== undefined) {
    if (!isMode(given)) {
      throw new InputError(
        `--cassette "${given}" is not a cassette mode`,
        undefined,
        `use one of: ${cassetteModes.join(', ')}`,
      );
    }
    return given;
  }
  if (!existsSync(path.join(root, cassettesDir))) return 'off';
  return env.CI === 'true' || env.CI === '1' ? 'replay' : 'record-missing';
};

/**
 * Each case's cassette (`cassettes/<eval path>/<case key>.jsonl`). A command (`cli` target) cannot be replayed:
 * a replay that would need one is refused before anything runs.
 */
export const cassetteRefs = (cases: readonly PlannedCase[], mode: CassetteMode) => {
  if (mode === 'off') return () => undefined;
  if (mode === 'replay') {
    const command = cases.find((c) => c.target.kind === 'cli');
    if (command) {
      throw new InputError(
        `target "${command.target.label}" runs a command, which a cassette cannot replay`,
        undefined,
        'replay only model targets (filter with --filter-targets), or run with --cassette off',
      );
    }
  }
  return (c: PlannedCase): CassetteRef => ({
    file: path.posix.join(cassettesDir, c.eval.path, `${c.key}.jsonl`),
    mode,
  });
};
