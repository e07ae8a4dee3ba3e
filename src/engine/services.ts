import path from 'node:path';
import { ProctorError } from '../errors.js';
import { type CreatedAssertion, type ResolvedAssertion, resolveAssertion } from '../graders/assertion.js';
import { thisProcess } from '../process-info.js';
import type { JsonObject } from '../records.js';
import type { RunOwner } from '../store/store.js';
import { targets } from '../targets/registry.js';
import { interpolateEnv } from '../targets/secrets.js';
import type { Target, TargetContext } from '../targets/target.js';
import { WorkspacePools } from '../workspaces/pool.js';

export interface ServicesOptions {
  /** The process executing runs: recorded beside its workspace slots and service logs for `runs gc`. */
  owner?: RunOwner;
  /** Most slots per workspace spec: how many cases the runner can have in flight. */
  maxSlots?: number;
  /** The project's root in this process's checkout: specs name files relative to it. Default: the cwd. */
  projectRoot?: string;
}

/** A target as a step names it: the config is raw, `${ENV}` is resolved here, in the executing process. */
export interface TargetRef {
  label: string;
  kind: string;
  config: JsonObject;
  /** Relative to the project root. */
  baseDir: string;
}

/** An assertion as a verify step carries it: already split and validated by the plan layer. */
export interface AssertionRef {
  spec: ResolvedAssertion;
  /** Relative to the project root. */
  baseDir: string;
}

/**
 * What steps share across the runs of one process: targets and graders are built once per distinct config
 * (a compiled regex, an HTTP client), and each workspace spec has one pool.
 */
export class Services {
  private readonly targetCache = new Map<string, Target>();
  private readonly assertionCache = new Map<string, CreatedAssertion>();

  readonly owner: RunOwner;
  readonly workspaces: WorkspacePools;
  private readonly projectRoot: string;

  constructor(
    readonly env: Readonly<Record<string, string | undefined>>,
    options: ServicesOptions = {},
  ) {
    // Without a runner's owner (a library caller), this process owns what it makes.
    this.owner = options.owner ?? thisProcess();
    this.projectRoot = options.projectRoot ?? process.cwd();
    this.workspaces = new WorkspacePools({ owner: this.owner, maxSlots: options.maxSlots ?? 4 });
  }

  /** A path a spec names (relative to the project root) in this checkout; an absolute one stays as it is. */
  projectPath(rel: string): string {
    return path.resolve(this.projectRoot, rel);
  }

  target(ref: TargetRef): Target {
    const cacheKey = JSON.stringify(ref);
    let target = this.targetCache.get(cacheKey);
    if (!target) {
      const def = targets[ref.kind as keyof typeof targets];
      if (!def) throw new ProctorError('internal', `unknown target kind "${ref.kind}"`);
      const config = def.config.parse(interpolateEnv(ref.config, this.env));
      // The registry's union of config types collapses here; each def validates its own config above.
      target = (def.create as (c: unknown, ctx: TargetContext) => Target)(config, {
        baseDir: this.projectPath(ref.baseDir),
        env: this.env,
      });
      this.targetCache.set(cacheKey, target);
    }
    return target;
  }

  assertion(ref: AssertionRef): CreatedAssertion {
    const cacheKey = JSON.stringify(ref);
    let assertion = this.assertionCache.get(cacheKey);
    if (!assertion) {
      assertion = resolveAssertion(ref.spec, { baseDir: this.projectPath(ref.baseDir) });
      this.assertionCache.set(cacheKey, assertion);
    }
    return assertion;
  }
}
