import type { Json, JsonObject } from '../../records.js';
import { isRecord } from '../../records.js';
import { stableJson } from '../../stable-json.js';
import type { Env } from '../env.js';
import type { Path, Source } from '../source.js';
import { translateAssertion } from './assertions.js';
import { translatePrompts } from './prompts.js';
import { providerTarget } from './providers.js';
import { checkKeys } from './refuse.js';
import { type ReadTest, readOptions, readTests, type TestScope } from './tests.js';
import { Origins, TranslatedSource } from './translated-source.js';
import { combinations, loadVars } from './vars.js';

/** The judge promptfoo grades with when none is configured, through the OpenAI settings in the environment. */
const defaultGrader = 'openai:gpt-5';

const topInstead = {
  scenarios: 'write each scenario’s tests out under `tests:` (a CSV file keeps them short)',
  outputPath: 'write results with `proctor eval run -o DIR` or `proctor results export`',
  env: 'set the variables in the environment Proctor runs in',
  commandLineOptions: 'pass the options to `proctor eval run`',
  extensions: 'run setup in a test’s `before:` steps of a native eval (`proctor import promptfoo`)',
  derivedMetrics: 'compute the metric in a `javascript` assertion',
  nunjucksFilters: 'Proctor’s templates have the common nunjucks filters built in (dump, upper, lower, …)',
  redteam: 'run red teaming with promptfoo itself',
  writeLatestResults: 'Proctor keeps every run’s results in .proctor/results',
  tags: 'put them into `description`',
  metadata: 'put them into `description`',
  sharing: 'results are never shared; remove the key (or write `sharing: false`)',
};

const evaluateOptions = (source: Source, raw: unknown): JsonObject | undefined => {
  if (raw === undefined) return undefined;
  if (!isRecord(raw))
    throw source.fail(
      ['evaluateOptions'],
      'evaluateOptions must be a mapping',
      'write `evaluateOptions: {maxConcurrency: 4}`',
    );
  checkKeys(source, ['evaluateOptions'], raw, ['maxConcurrency', 'repeat'], {
    delay: 'limit the rate with `max_concurrency` in proctor.toml instead',
    cache: 'Proctor does not cache replies: record them with cassettes instead',
  });
  return {
    ...(raw.maxConcurrency !== undefined ? { max_concurrency: raw.maxConcurrency as Json } : {}),
    ...(raw.repeat !== undefined ? { repeat: raw.repeat as Json } : {}),
  };
};

/**
 * A promptfoo config as the native eval document the rest of the plan reads: providers become inline targets,
 * `file://` prompts, tests and vars are read in, array vars expand into one test per combination, and
 * assertions take Proctor's spelling. Every key Proctor would not honour is refused here, at its position.
 */
export const translatePromptfoo = (config: Source, dir: string, root: string, env: Env): TranslatedSource => {
  const doc = config.value as Record<string, unknown>;
  checkKeys(
    config,
    [],
    doc,
    ['description', 'prompts', 'providers', 'targets', 'tests', 'defaultTest', 'evaluateOptions', '$schema', 'sharing'],
    topInstead,
  );
  if (doc.sharing !== undefined && doc.sharing !== false)
    throw config.fail(['sharing'], 'sharing is not supported by Proctor', topInstead.sharing, 'key');
  if (doc.providers !== undefined && doc.targets !== undefined)
    throw config.fail(['targets'], '`targets` and `providers` name the same list', 'keep one of them', 'key');
  const providersKey = doc.providers !== undefined ? 'providers' : 'targets';
  const rawProviders = doc[providersKey];
  if (rawProviders === undefined)
    throw config.fail([], 'the promptfoo config lists no providers', 'add `providers: [openai:gpt-4o-mini]` (or echo)');
  if (doc.prompts === undefined)
    throw config.fail([], 'the promptfoo config has no prompts', 'add `prompts: ["{{ question }}"]`');

  const out = new Origins();
  const providerList = Array.isArray(rawProviders) ? rawProviders : [rawProviders];
  const providerAt = (i: number): Path => (Array.isArray(rawProviders) ? [providersKey, i] : [providersKey]);
  const targets = providerList.map((p, i) => {
    out.set(['targets', i], { source: config, path: providerAt(i) });
    return providerTarget(config, providerAt(i), p, env);
  });

  const prompts = translatePrompts(config, doc.prompts, dir).map((p, i) => {
    out.set(['prompts', i], { source: config, path: p.at });
    return p.prompt;
  });

  const defaults = isRecord(doc.defaultTest) ? doc.defaultTest : undefined;
  if (doc.defaultTest !== undefined && !defaults)
    throw config.fail(['defaultTest'], 'defaultTest must be a mapping', 'write `defaultTest: {assert: […]}`');
  if (defaults)
    checkKeys(config, ['defaultTest'], defaults, ['vars', 'assert', 'threshold', 'options', 'metadata'], {
      provider: 'set the provider under `providers:`; a judge goes under `options.provider`',
    });
  const defaultJudge = readOptions(config, ['defaultTest', 'options'], defaults?.options);
  // Every judge the assertions name, declared once under `judges:`; a different one under a taken label gets #N.
  const judges: Record<string, JsonObject> = {};
  const declareJudge = (source: Source, at: Path, provider: unknown): string => {
    const { label, ...target } = providerTarget(source, at, provider, env);
    let name = String(label);
    for (let n = 2; judges[name] !== undefined && stableJson(judges[name]) !== stableJson(target); n++) {
      name = `${label}#${n}`;
    }
    judges[name] = target;
    out.set(['judges', name], { source, path: at });
    return name;
  };
  const scope: TestScope = {
    dir,
    root,
    judge: (source, at, provider) =>
      provider !== undefined
        ? declareJudge(source, at, provider)
        : defaultJudge !== undefined
          ? declareJudge(config, ['defaultTest', 'options', 'provider'], defaultJudge)
          : declareJudge(config, at, defaultGrader),
  };

  const defaultTest = defaults ? readDefaults(config, defaults, scope) : undefined;
  const read = readTests(config, doc.tests, scope);
  const tests: JsonObject[] = [];
  (read.length ? read : [{ vars: {}, assert: [], origin: { source: config, path: [] } } as ReadTest]).forEach(
    (t, n) => {
      const expanded = combinations({ ...(defaultTest?.vars ?? {}), ...t.vars });
      expanded.forEach((vars, k) => {
        const at = tests.length;
        out.set(['tests', at], t.origin);
        for (const [j, o] of (t.assertOrigins ?? []).entries()) out.set(['tests', at, 'assert', j], o);
        tests.push({
          id: expanded.length > 1 ? `t${n + 1}-${k + 1}` : `t${n + 1}`,
          ...(t.description !== undefined ? { description: t.description } : {}),
          vars,
          ...(t.assert.length ? { assert: t.assert } : {}),
          ...(t.threshold !== undefined ? { threshold: t.threshold } : {}),
          ...(t.metadata !== undefined || defaultTest?.metadata !== undefined
            ? { metadata: { ...(defaultTest?.metadata ?? {}), ...(t.metadata ?? {}) } }
            : {}),
        });
      });
    },
  );

  out.set(['default_test'], { source: config, path: ['defaultTest'] });
  const options = evaluateOptions(config, doc.evaluateOptions);
  out.set(['evaluate_options'], { source: config, path: ['evaluateOptions'] });
  out.set(['description'], { source: config, path: ['description'] });
  const native: JsonObject = {
    ...(doc.description !== undefined ? { description: doc.description as Json } : {}),
    targets,
    prompts: prompts.map((p) => (p.id === undefined ? p.text : p)),
    ...(Object.keys(judges).length ? { judges } : {}),
    ...(defaultTest && (defaultTest.assert.length || defaultTest.threshold !== undefined)
      ? {
          default_test: {
            ...(defaultTest.assert.length ? { assert: defaultTest.assert } : {}),
            ...(defaultTest.threshold !== undefined ? { threshold: defaultTest.threshold } : {}),
          },
        }
      : {}),
    tests,
    ...(options && Object.keys(options).length ? { evaluate_options: options } : {}),
  };
  return new TranslatedSource(config, native, out);
};

interface Defaults {
  vars: JsonObject;
  assert: JsonObject[];
  threshold?: number;
  metadata?: JsonObject;
}

const readDefaults = (config: Source, raw: Record<string, unknown>, scope: TestScope): Defaults => {
  if (raw.assert !== undefined && !Array.isArray(raw.assert))
    throw config.fail(['defaultTest', 'assert'], 'assert must be a list', 'write `assert: [{type: …}]`');
  if (raw.threshold !== undefined && typeof raw.threshold !== 'number')
    throw config.fail(
      ['defaultTest', 'threshold'],
      'threshold must be a number from 0 to 1',
      'write e.g. `threshold: 0.8`',
    );
  const assertions = { dir: scope.dir, judge: (at: Path, own: unknown) => scope.judge(config, at, own) };
  return {
    vars: loadVars(config, ['defaultTest', 'vars'], raw.vars, scope.dir),
    assert: ((raw.assert ?? []) as unknown[]).map((a, i) =>
      translateAssertion(config, ['defaultTest', 'assert', i], a, assertions),
    ),
    ...(raw.threshold !== undefined ? { threshold: raw.threshold } : {}),
    ...(isRecord(raw.metadata) ? { metadata: raw.metadata as JsonObject } : {}),
  };
};
