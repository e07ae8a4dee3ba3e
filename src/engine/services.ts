import path from 'node:path';
import { remember } from '../bounded-map.js';
import { ProctorError } from '../errors.js';
import { type CreatedAssertion, isCheapKind, type ResolvedAssertion, resolveAssertion } from '../graders/assertion.js';
import { thisProcess } from '../process-info.js';
import type { RunOwner } from '../store/store.js';
import { priceUsage } from '../targets/cost.js';
import { targets } from '../targets/registry.js';
import { interpolateEnv } from '../targets/secrets.js';
import type { Target, TargetContext } from '../targets/target.js';
import { WorkspacePools } from '../workspaces/pool.js';
import { cassetteTarget, replayable } from './cassette-scope.js';
import { runSecrets } from './redact.js';
import type { TargetRef } from './target-ref.js';
import type { RunRequest } from './task.js';

export interface ServicesOptions {
  /** The process executing runs: recorded beside its workspace slots and service logs for `runs gc`. */
  owner?: RunOwner;
  /** Most slots per workspace spec: how many cases the runner can have in flight. */
  maxSlots?: number;
  /** The project's root in this process's checkout: specs name files relative to it. Default: the cwd. */
  projectRoot?: string;
}

/** An assertion as a verify step carries it: already split and validated by the plan layer. */
export interface AssertionRef {
  spec: ResolvedAssertion;
  /** Relative to the project root. */
  baseDir: string;
  /** The judge targets its model-graded kinds name, by label. */
  judges?: Readonly<Record<string, TargetRef>>;
}

// Assertions are mostly per test (an `equals` on the test's own value): a suite of 100,000 tests must not keep
// 100,000 graders, and the ones shared by every test (default_test's) stay among the recent.
const maxAssertions = 1000;
const maxPaths = 1000;

/**
 * What steps share across the runs of one process: targets and graders are built once per distinct config
 * (a compiled regex, an HTTP client), and each workspace spec has one pool.
 */
export class Services {
  private readonly targetCache = new Map<string, Target>();
  /** A ref's JSON by the object: a plan's cases share their target's ref (compile-task.ts); a stored spec's do not. */
  private readonly refJson = new WeakMap<TargetRef, string>();
  private readonly assertionCache = new Map<string, CreatedAssertion>();
  private readonly projectPaths = new Map<string, string>();
  private readonly secretsOf = new WeakMap<object, { metadata: object; secrets: readonly string[] }>();

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

  /**
   * A run's secret values (redact.ts) over this process's environment, worked out once per request: the
   * runner redacts what the store keeps with them at submit, and the run its journal and result.
   */
  secrets(req: Pick<RunRequest, 'task' | 'metadata'>): readonly string[] {
    // One entry per task, for the metadata it was last asked with: a WeakMap per task would be one more per case.
    const known = this.secretsOf.get(req.task);
    if (known?.metadata === req.metadata) return known.secrets;
    const secrets = runSecrets(this.env, req);
    this.secretsOf.set(req.task, { metadata: req.metadata, secrets });
    return secrets;
  }

  /** A path a spec names (relative to the project root) in this checkout; an absolute one stays as it is. */
  projectPath(rel: string): string {
    // Asked a few times per case, of the few folders a project's specs sit in.
    let resolved = this.projectPaths.get(rel);
    if (resolved === undefined) {
      resolved = path.resolve(this.projectRoot, rel);
      remember(this.projectPaths, rel, resolved, maxPaths);
    }
    return resolved;
  }

  /** The target of a ref; a judge's is its own instance, so its rate limit is kept apart. Usage comes priced. */
  target(ref: TargetRef, role: 'target' | 'judge' = 'target'): Target {
    let json = this.refJson.get(ref);
    if (json === undefined) {
      json = JSON.stringify(ref);
      this.refJson.set(ref, json);
    }
    const cacheKey = `${role}:${json}`;
    let target = this.targetCache.get(cacheKey);
    if (!target) {
      const def = targets[ref.kind as keyof typeof targets];
      if (!def) throw new ProctorError('internal', `unknown target kind "${ref.kind}"`);
      const config = def.config().parse(interpolateEnv(ref.config, this.env));
      // The registry's union of config types collapses here; each def validates its own config above.
      const inner = (def.create as (c: unknown, ctx: TargetContext) => Target)(config, {
        baseDir: this.projectPath(ref.baseDir),
        env: this.env,
        role,
        label: ref.label,
      });
      const price = ref.price;
      const embed = inner.embed?.bind(inner);
      const priced: Target = {
        invoke: (input, signal) =>
          inner.invoke(input, signal).then((out) => ({ ...out, usage: priceUsage(out.usage, price) })),
        ...(embed
          ? {
              embed: async (texts: string[], signal: AbortSignal) => {
                const out = await embed(texts, signal);
                return { ...out, usage: priceUsage(out.usage, price) };
              },
            }
          : {}),
      };
      // A command's calls are not recorded: a cassette holds model calls (CLI targets are refused for replay).
      target = replayable(ref.kind) ? cassetteTarget(priced, ref, role) : priced;
      this.targetCache.set(cacheKey, target);
    }
    return target;
  }

  /**
   * The grader of an assertion: shared by equal configs, except a cheap kind's, made anew (an `equals` on the
   * test's own value is made in about 0.4 µs; its cache key alone, the config as JSON, costs ten times that).
   */
  assertion(ref: AssertionRef): CreatedAssertion {
    if (isCheapKind(ref.spec.kind)) return this.createAssertion(ref);
    const cacheKey = JSON.stringify(ref);
    let assertion = this.assertionCache.get(cacheKey);
    if (!assertion) {
      assertion = this.createAssertion(ref);
      remember(this.assertionCache, cacheKey, assertion, maxAssertions);
    }
    return assertion;
  }

  private createAssertion(ref: AssertionRef): CreatedAssertion {
    const judges = ref.judges ?? {};
    return resolveAssertion(ref.spec, {
      baseDir: this.projectPath(ref.baseDir),
      judge: (label) => {
        const judge = judges[label];
        if (!judge) throw new ProctorError('internal', `no judge target "${label}" in the verify step`);
        return this.target(judge, 'judge');
      },
    });
  }
}
