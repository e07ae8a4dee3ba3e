import { resolve } from 'node:path';
import { loadProjectConfig } from '../../plan/config.js';
import { compileTaskInstance, readTaskFile } from '../../plan/load-task.js';
import { instanceSeeds, parseAssignments } from '../../plan/seeds.js';
import { exitCodes } from '../exit-codes.js';

/** `proctor task validate TASK…`: compile every instance the file's seeds make, run nothing, write nothing. */
export const taskValidate = (files: string[], opts: { seed?: string[]; target?: string }): number => {
  const cwd = process.cwd();
  const config = loadProjectConfig(cwd, process.env);
  const flags = parseAssignments('--seed', opts.seed ?? []);
  for (const file of files) {
    const task = readTaskFile(resolve(cwd, file), config);
    const fileSeeds = task.shape.seeds ?? [];
    const instances = instanceSeeds(fileSeeds, flags, Math.max(1, fileSeeds.length)).map((seeds) =>
      compileTaskInstance(task, config, process.env, {
        seeds,
        overrides: {},
        ...(opts.target ? { target: opts.target } : {}),
      }),
    );
    const first = instances[0];
    process.stdout.write(
      `ok ${task.display}: ${first?.steps.length ?? 0} steps (${first?.steps.map((s) => `${s.id}:${s.type}`).join(', ')})${instances.length > 1 ? `, ${instances.length} seeded instances` : ''}\n`,
    );
  }
  return exitCodes.ok;
};
