import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { isRunnerKind, type RunnerConfig, type RunnerKind, runnerKinds } from '../runners/registry.js';
import { type Env, interpolateAt } from './env.js';
import { labelProblem, optionsSchema, toEvalOptions } from './options.js';
import { parsedOnce } from './parse-once.js';
import type { Path, Source } from './source.js';
import type { ProjectConfig, TargetSpec } from './spec.js';
import { buildTarget } from './target-spec.js';
import { TomlSource } from './toml-source.js';

const configFileName = 'proctor.toml';
const defaultStoreUrl = 'sqlite:.proctor/proctor.db';

const configSchema = z.strictObject({
  runner: z
    .strictObject({
      // Checked against the kinds this build has below, so an unavailable kind fails here, before any store opens.
      kind: z.string().default('local'),
      // Checked against the kind's own schema below (runners/registry.ts).
      config: z.record(z.string(), z.unknown()).optional(),
    })
    .optional(),
  store: z.strictObject({ url: z.string().min(1).optional() }).optional(),
  // Each target is checked against its kind's own schema by buildTarget, with positions.
  targets: z.record(z.string(), z.record(z.string(), z.unknown())).optional(),
  // A budget is the command's, across every eval file: proctor.toml may set it, an eval file may not.
  defaults: optionsSchema.extend({ budget_usd: z.number().positive().optional() }).optional(),
  pricing: z
    .record(
      z.string(),
      z.strictObject({
        input: z.number().nonnegative(),
        output: z.number().nonnegative(),
        cache_read: z.number().nonnegative().optional(),
        cache_write: z.number().nonnegative().optional(),
      }),
    )
    .optional(),
});

/** The nearest proctor.toml in `cwd` or an ancestor, if any. */
const findConfigFile = (cwd: string): string | undefined => {
  let dir = path.resolve(cwd);
  for (;;) {
    const candidate = path.join(dir, configFileName);
    if (existsSync(candidate)) return candidate;
    const parent = path.dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
};

/**
 * Loads and validates proctor.toml (the nearest one up from `cwd`; none means all defaults with root = cwd).
 * `${VAR}` is resolved everywhere except in target configs, which stay raw until a worker runs the target.
 */
export const loadProjectConfig = (cwd: string, env: Env): ProjectConfig => {
  const file = findConfigFile(cwd);
  if (!file) return defaultsFor(path.resolve(cwd));
  const root = path.dirname(file);
  const source = TomlSource.parse(configFileName, readFileSync(file, 'utf8'));
  const raw = source.value as Record<string, unknown>;
  const resolved: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) {
    resolved[key] = key === 'targets' ? value : interpolateTree(source, [key], value, env);
  }
  const parsed = configSchema.safeParse(resolved, parsedOnce);
  if (!parsed.success) throw source.zodError(parsed.error, [], configSchema);
  const { runner, store, defaults, pricing } = parsed.data;
  const kind = runner?.kind ?? 'local';
  if (!isRunnerKind(kind)) {
    throw source.fail(
      ['runner', 'kind'],
      `runner kind "${kind}" is not available`,
      `use one of: ${Object.keys(runnerKinds)
        .map((k) => `"${k}"`)
        .join(', ')}`,
    );
  }
  const storeUrl = resolveStoreUrl(store?.url ?? defaultStoreUrl, root);
  const runnerConfig = runnerConfigOf(source, kind, runner?.config ?? {}, storeUrl);

  const targets: Record<string, TargetSpec> = {};
  for (const [label, declared] of Object.entries(parsed.data.targets ?? {})) {
    const problem = labelProblem(label);
    if (problem)
      throw source.fail(
        ['targets', label],
        `target name "${label}" ${problem}`,
        'use letters, digits, "-", "_" or "."',
      );
    targets[label] = buildTarget(source, ['targets', label], label, declared, root, env);
  }

  return {
    root,
    file,
    runner: runnerConfig,
    store: {
      url: storeUrl,
      ...(store?.url !== undefined ? { where: source.pos(['store', 'url']) } : {}),
    },
    targets,
    defaults: {
      ...toEvalOptions(defaults),
      ...(defaults?.budget_usd !== undefined ? { budgetUsd: defaults.budget_usd } : {}),
    },
    pricing: (pricing ?? {}) as ProjectConfig['pricing'],
  };
};

/** `[runner.config]` checked against its kind's schema; a kind that runs elsewhere refuses a SQLite store. */
const runnerConfigOf = (source: Source, kind: RunnerKind, config: unknown, storeUrl: string): RunnerConfig => {
  const def = runnerKinds[kind];
  const schema = def.config();
  const parsed = schema.safeParse(config, parsedOnce);
  if (!parsed.success) throw source.zodError(parsed.error, ['runner', 'config'], schema);
  if (def.remote && storeUrl.startsWith('sqlite:')) {
    throw source.fail(
      ['runner', 'kind'],
      `runner kind "${kind}" executes runs on other machines, which cannot reach a SQLite store`,
      'set [store] url = "postgres://user@host:port/database" (a PostgreSQL every worker reaches), or use kind = "local"',
    );
  }
  return { kind, config: parsed.data } as RunnerConfig;
};

const defaultsFor = (root: string): ProjectConfig => ({
  root,
  runner: { kind: 'local', config: {} },
  store: { url: resolveStoreUrl(defaultStoreUrl, root) },
  targets: {},
  defaults: {},
  pricing: {},
});

/** A relative SQLite path is relative to the project root, not to wherever the command was started. */
const resolveStoreUrl = (url: string, root: string): string => {
  if (!url.startsWith('sqlite:')) return url;
  const file = url.slice('sqlite:'.length);
  if (file === ':memory:' || file === '' || path.isAbsolute(file)) return url;
  return `sqlite:${path.resolve(root, file)}`;
};

/**
 * Interpolates every string under `value`. A string that was a `${VAR}` reference and became an integer is
 * read as a number, so `workers = "${WORKERS}"` works as users expect.
 */
const interpolateTree = (source: Source, at: Path, value: unknown, env: Env): unknown => {
  if (typeof value === 'string') {
    const out = interpolateAt(source, at, value, env);
    return out !== value && /^-?\d+(\.\d+)?$/.test(out.trim()) ? Number(out) : out;
  }
  if (Array.isArray(value)) return value.map((v, i) => interpolateTree(source, [...at, i], v, env));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, interpolateTree(source, [...at, k], v, env)]));
  }
  return value;
};
