import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { indexFile } from '../bundle/writer.js';
import { InputError } from '../errors.js';
import type { ProjectConfig } from './spec.js';

export const resultsDir = (config: ProjectConfig): string => join(config.root, '.proctor', 'results');

/**
 * The bundle directory a `<run>` names: a run id under .proctor/results, a bundle directory, or an
 * index.jsonl path. Anything else is bad input.
 */
export const selectBundle = (selector: string, config: ProjectConfig, cwd: string): string => {
  const asPath = resolve(cwd, selector);
  if (existsSync(asPath)) {
    if (statSync(asPath).isDirectory()) {
      if (existsSync(join(asPath, indexFile))) return asPath;
    } else if (basename(asPath) === indexFile) {
      return dirname(asPath);
    }
  }
  const byId = join(resultsDir(config), selector);
  if (!selector.includes('/') && existsSync(join(byId, indexFile))) return byId;
  throw new InputError(
    `no results bundle "${selector}"`,
    undefined,
    'give a run id (see `proctor results list`), a bundle directory, or a path to its index.jsonl',
  );
};

/** The newest bundle under .proctor/results (run ids sort by their start time), for commands given no run. */
export const latestBundle = (config: ProjectConfig): string => {
  const dir = resultsDir(config);
  const ids = existsSync(dir) ? readdirSync(dir).sort().reverse() : [];
  const id = ids.find((name) => existsSync(join(dir, name, indexFile)));
  if (id === undefined) {
    throw new InputError('no results yet under .proctor/results', undefined, 'run `proctor eval run` first');
  }
  return join(dir, id);
};

/**
 * The folder a run writes into when it is known before planning: `--output`'s, else the bundle `--resume` or
 * `--rerun-failed` names (they append to it); undefined for a new bundle under .proctor/results.
 */
export const targetBundle = (
  flags: { output?: string; resume?: string; rerunFailed?: string },
  config: ProjectConfig,
  cwd: string,
): string | undefined => {
  if (flags.output) return resolve(cwd, flags.output);
  const selector = flags.resume ?? flags.rerunFailed;
  return selector === undefined ? undefined : selectBundle(selector, config, cwd);
};
