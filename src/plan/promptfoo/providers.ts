import type { JsonObject } from '../../records.js';
import { isRecord } from '../../records.js';
import type { Env } from '../env.js';
import type { Path, Source } from '../source.js';
import { checkKeys } from './refuse.js';
import { shellQuote } from './shell.js';

// Resolved where the target runs, like promptfoo's own lookup, so no machine's URL is baked into a spec.
// biome-ignore lint/suspicious/noTemplateCurlyInString: a ${VAR} reference for the target, not a JS template.
const defaultOpenAiBase = '${OPENAI_BASE_URL:-https://api.openai.com/v1}';

/** Runs a promptfoo JavaScript provider module (`callApi(prompt, context, options)`) as a command target. */
const moduleRunner = `
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
const [file, optionsJson] = process.argv.slice(1);
const options = JSON.parse(optionsJson);
const mod = await import(pathToFileURL(resolve(file)).href);
const exported = mod.default ?? mod;
const provider =
  typeof exported === 'function'
    ? exported.prototype && typeof exported.prototype.callApi === 'function'
      ? new exported(options)
      : { callApi: exported }
    : exported;
const prompt = readFileSync(0, 'utf8');
const varsJson = process.env.PROCTOR_VARS ?? readFileSync(process.env.PROCTOR_VARS_FILE, 'utf8');
const result = await provider.callApi(prompt, { vars: JSON.parse(varsJson), prompt: { raw: prompt, label: options.label } }, {});
if (result && result.error) {
  process.stderr.write(String(result.error));
  process.exit(1);
}
const output = result ? result.output : undefined;
process.stdout.write(typeof output === 'string' ? output : JSON.stringify(output ?? null));
`;

/** A provider as promptfoo writes it, split into its id, label and config. */
interface Provider {
  id: string;
  label?: string;
  config: Record<string, unknown>;
  /** Where the config is, for errors about its keys. */
  configAt: Path;
}

const readProvider = (source: Source, at: Path, raw: unknown): Provider => {
  if (typeof raw === 'string') return { id: raw, config: {}, configAt: at };
  if (!isRecord(raw))
    throw source.fail(
      at,
      'a provider must be a string or a mapping',
      'write `openai:gpt-4o-mini` or `{id: …, label: …}`',
    );
  if (raw.id === undefined) {
    // promptfoo's map form: `- openai:gpt-4o: {config: …}`.
    const [only, ...more] = Object.keys(raw);
    if (only !== undefined && more.length === 0 && only.includes(':') && isRecord(raw[only]))
      return { ...readProvider(source, [...at, only], { ...raw[only], id: only }) };
    throw source.fail(at, 'this provider has no `id`', 'add `id: openai:MODEL` (or exec:…, file://…, echo)');
  }
  checkKeys(source, at, raw, ['id', 'label', 'config'], {
    transform: 'transform the output in a `javascript` assertion, or in the command of an `exec:` provider',
    delay: 'limit the rate with `max_concurrency` in proctor.toml instead',
    prompts: 'list the prompts this target should see in an eval file of their own',
    env: 'set the variables in the environment Proctor runs in',
  });
  if (typeof raw.id !== 'string')
    throw source.fail([...at, 'id'], 'a provider id must be a string', 'write e.g. `id: openai:gpt-4o-mini`');
  if (raw.label !== undefined && typeof raw.label !== 'string')
    throw source.fail([...at, 'label'], 'a provider label must be a string', 'write e.g. `label: fast`');
  if (raw.config !== undefined && !isRecord(raw.config))
    throw source.fail([...at, 'config'], 'a provider config must be a mapping', 'write `config: {temperature: 0}`');
  return {
    id: raw.id,
    ...(raw.label !== undefined ? { label: raw.label } : {}),
    config: (raw.config ?? {}) as Record<string, unknown>,
    configAt: [...at, 'config'],
  };
};

const openaiTarget = (source: Source, p: Provider, model: string, env: Env): JsonObject => {
  const c = p.config;
  checkKeys(
    source,
    p.configAt,
    c,
    ['apiBaseUrl', 'apiHost', 'apiKey', 'apiKeyEnvar', 'temperature', 'max_tokens', 'headers'],
    {
      max_completion_tokens: 'use `max_tokens`',
    },
  );
  const base =
    typeof c.apiBaseUrl === 'string'
      ? c.apiBaseUrl
      : typeof c.apiHost === 'string'
        ? `https://${c.apiHost}/v1`
        : env.OPENAI_BASE_URL === undefined && env.OPENAI_API_BASE_URL !== undefined
          ? env.OPENAI_API_BASE_URL
          : defaultOpenAiBase;
  return {
    kind: 'openai',
    base_url: base,
    model,
    // promptfoo sends a prompt that renders to a JSON or YAML list of messages as those messages.
    prompt_format: 'chat',
    ...(c.apiKey !== undefined ? { api_key: c.apiKey as string } : {}),
    ...(c.apiKeyEnvar !== undefined ? { api_key_env: c.apiKeyEnvar as string } : {}),
    ...(c.temperature !== undefined ? { temperature: c.temperature as number } : {}),
    ...(c.max_tokens !== undefined ? { max_tokens: c.max_tokens as number } : {}),
    ...(c.headers !== undefined ? { headers: c.headers as JsonObject } : {}),
  };
};

/**
 * `anthropic:MODEL` / `anthropic:messages:MODEL` as the `anthropic` target (issue 12), named as that target
 * names its keys.
 */
const anthropicTarget = (source: Source, p: Provider, model: string): JsonObject => {
  const c = p.config;
  checkKeys(source, p.configAt, c, ['apiKey', 'apiBaseUrl', 'temperature', 'max_tokens']);
  return {
    kind: 'anthropic',
    model,
    prompt_format: 'chat',
    ...(c.apiKey !== undefined ? { api_key: c.apiKey as string } : {}),
    ...(c.apiBaseUrl !== undefined ? { base_url: c.apiBaseUrl as string } : {}),
    ...(c.temperature !== undefined ? { temperature: c.temperature as number } : {}),
    ...(c.max_tokens !== undefined ? { max_tokens: c.max_tokens as number } : {}),
  };
};

// `json.a.b[0]` (optionally `(json) => json.a.b[0]`): promptfoo's common transformResponse, a plain path.
const jsonPathTransform = /^(?:\(?json\)?\s*=>\s*)?json((?:\.[A-Za-z_$][\w$]*|\[\d+\])*)$/;

/**
 * `http` (with `config.url`) or an `https://…` id as the `http` target: url, method, headers and body carry
 * over. A `transformResponse` that is a plain path into the JSON reply (`json.output.text`) becomes the target's
 * output selector; any other expression is refused, since guessing it would grade the wrong text.
 */
const httpTarget = (source: Source, p: Provider): JsonObject => {
  const c = p.config;
  checkKeys(source, p.configAt, c, ['url', 'method', 'headers', 'body', 'transformResponse']);
  const transform = c.transformResponse;
  const path = typeof transform === 'string' ? jsonPathTransform.exec(transform.trim())?.[1] : undefined;
  if (transform !== undefined && path === undefined)
    throw source.fail(
      [...p.configAt, 'transformResponse'],
      'only a plain path into the JSON reply (e.g. `json.output.text`) is supported as transformResponse',
      'pick the output with the http target’s `response.output` selector, or an `output_transform: file://x.mjs#fn`, in a native eval (`proctor import promptfoo`)',
    );
  return {
    kind: 'http',
    url: (c.url as string | undefined) ?? p.id,
    ...(c.method !== undefined ? { method: c.method as string } : {}),
    ...(c.headers !== undefined ? { headers: c.headers as JsonObject } : {}),
    ...(c.body !== undefined ? { body: c.body as JsonObject } : {}),
    ...(path !== undefined ? { response: { format: 'json', output: `$${path}` } } : {}),
  };
};

/** `exec:CMD`: promptfoo appends the prompt, an options JSON and a context JSON as arguments. */
const execTarget = (source: Source, p: Provider, command: string): JsonObject => {
  const { basePath, ...rest } = p.config;
  if (basePath !== undefined && typeof basePath !== 'string')
    throw source.fail(
      [...p.configAt, 'basePath'],
      'basePath must be a string',
      'write a directory relative to this file',
    );
  const options = shellQuote(JSON.stringify({ config: rest }));
  return {
    kind: 'cli',
    // The prompt arrives on stdin and becomes the first argument; PROCTOR_VARS holds the case's vars.
    command: `${command} "$(cat)" ${options} "{\\"vars\\":$PROCTOR_VARS}"`,
    cwd: basePath ?? '.',
  };
};

/** `file://provider.js`: a module whose default export has promptfoo's `callApi`, run by node per case. */
const moduleTarget = (source: Source, at: Path, p: Provider, file: string): JsonObject => {
  if (!/\.(m|c)?js$/.test(file))
    throw source.fail(
      at,
      `cannot run the provider ${p.id}`,
      'Proctor runs JavaScript provider modules (.js, .mjs, .cjs); run others through `exec:`',
    );
  return {
    kind: 'cli',
    command: [
      'node',
      '--input-type=module',
      '-e',
      moduleRunner,
      file,
      JSON.stringify({ config: p.config, label: p.label ?? p.id }),
    ],
    cwd: '.',
  };
};

/**
 * One promptfoo provider as a native inline target (`{label, kind, …config}`): `openai:MODEL`,
 * `openai:chat:MODEL`, `anthropic:[messages:]MODEL`, `http`/`https://…`, `exec:COMMAND`, `echo` and
 * `file://provider.js`. Kinds Proctor lacks are refused here.
 */
export const providerTarget = (source: Source, at: Path, raw: unknown, env: Env): JsonObject => {
  const p = readProvider(source, at, raw);
  const idAt = typeof raw === 'string' ? at : [...at, 'id'];
  const label = p.label ?? p.id;
  const [scheme, ...restParts] = p.id.split(':');
  const rest = restParts.join(':');
  let target: JsonObject;
  if (p.id === 'echo') {
    checkKeys(source, p.configAt, p.config, []);
    target = { kind: 'echo' };
  } else if (scheme === 'openai') {
    const model = rest.startsWith('chat:') ? rest.slice('chat:'.length) : rest;
    if (model === '' || /^(completion|embedding|embeddings|assistant|image|realtime|responses):/.test(rest))
      throw source.fail(
        idAt,
        `unsupported provider "${p.id}"`,
        'Proctor calls OpenAI chat models: write `openai:MODEL` or `openai:chat:MODEL`',
      );
    target = openaiTarget(source, p, model, env);
  } else if (scheme === 'exec') target = execTarget(source, p, rest.trim());
  else if (p.id.startsWith('file://')) target = moduleTarget(source, idAt, p, p.id.slice('file://'.length));
  else if (scheme === 'anthropic')
    target = anthropicTarget(source, p, rest.startsWith('messages:') ? rest.slice('messages:'.length) : rest);
  else if (scheme === 'http' || scheme === 'https') target = httpTarget(source, p);
  else
    throw source.fail(
      idAt,
      `unsupported provider "${p.id}"`,
      'Proctor runs openai:MODEL, openai:chat:MODEL, anthropic:MODEL, http(s)://…, exec:COMMAND, echo and file://provider.js; run other endpoints through `exec:`',
    );
  return { label, ...target };
};
