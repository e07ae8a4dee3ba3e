import { isRecord, type JsonObject } from '../records.js';
import { literalSecrets, redacted } from '../targets/secrets.js';
import { metadataKeys, type RunRequest } from './task.js';

// Names of variables that hold credentials by convention; their values never reach the store or a file.
const secretName = /(API_?KEY|TOKEN|SECRET|PASSW(OR)?D|CREDENTIAL|PRIVATE_?KEY|AUTH)/i;
// Shorter values would redact ordinary words out of outputs ("on", "yes", a port number).
const minSecretLength = 6;
const reference = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-[^}]*)?\}/g;

const referencedNames = (value: unknown, out: Set<string>): void => {
  if (typeof value === 'string') {
    // Most strings (prompts, vars, expected values) reference nothing: the scan starts only where one might.
    if (value.includes('${')) for (const m of value.matchAll(reference)) out.add(m[1] as string);
  } else if (Array.isArray(value)) for (const v of value) referencedNames(v, out);
  else if (value !== null && typeof value === 'object') {
    // Every run walks its whole task: for-in lists no values to walk them.
    const record = value as Record<string, unknown>;
    for (const key in record) referencedNames(record[key], out);
  }
};

// A process's environment does not change under it: its credential names are found once, not once per run.
const credentialNamesOf = new WeakMap<object, readonly string[]>();
const credentialNames = (env: Readonly<Record<string, string | undefined>>): readonly string[] => {
  let names = credentialNamesOf.get(env);
  if (!names) {
    names = Object.keys(env).filter((name) => secretName.test(name));
    credentialNamesOf.set(env, names);
  }
  return names;
};

/** The values of a metadata map (`--set`, `--seed`) given under a credential's name. */
const givenUnderSecretNames = (given: unknown, out: Set<string>): void => {
  if (!isRecord(given)) return;
  for (const [name, value] of Object.entries(given)) if (secretName.test(name)) out.add(String(value));
};

// Every case of a target carries the plan's one config object: its literals are found once, not once per case.
const literalsOf = new WeakMap<object, { kind: string; values: readonly string[] }>();

const targetLiteral = (target: unknown, out: Set<string>): void => {
  if (!isRecord(target) || typeof target.kind !== 'string' || !isRecord(target.config)) return;
  let known = literalsOf.get(target.config);
  if (known?.kind !== target.kind) {
    known = { kind: target.kind, values: literalSecrets(target.kind, target.config) };
    literalsOf.set(target.config, known);
  }
  for (const v of known.values) out.add(v);
};

/** What the task's targets and judges hold literally at their secret keys (`api_key: sk-…` in a file). */
const targetLiterals = (task: RunRequest['task'], out: Set<string>): void => {
  for (const step of task.steps) {
    // A prompt step's target, and a verify step's judges.
    targetLiteral(step.config.target, out);
    const judges = step.config.judges;
    if (isRecord(judges)) for (const label in judges) targetLiteral(judges[label], out);
  }
};

/**
 * The secret values of a run. A value is secret when it is
 * - the value of an environment variable whose name says credential (`MY_API_KEY`, `GH_TOKEN`, …),
 * - the value of a variable the task references as `${VAR}` (target configs, exec env),
 * - written literally at a target's secret key (`api_key`, a header), or
 * - given to `task run` with `--set NAME=…` or `--seed NAME=…` (or a task file's seed) under a name that says
 *   credential (`--set password=…`).
 * So `--set token=$OPENAI_API_KEY` and `--seed key=$MY_API_KEY` are secret by the first rule whatever their
 * names. Values shorter than 6 characters never are. Longest first, so a secret containing another is cut whole.
 * Computed from the request and the environment alone, so the process that stores a run and the one that
 * executes it find the same secrets.
 */
export const runSecrets = (
  env: Readonly<Record<string, string | undefined>>,
  req: Pick<RunRequest, 'task' | 'metadata'>,
): string[] => {
  const values = new Set<string>();
  const add = (name: string): void => {
    const v = env[name];
    if (v !== undefined) values.add(v);
  };
  for (const name of credentialNames(env)) add(name);
  const referenced = new Set<string>();
  referencedNames(req.task, referenced);
  for (const name of referenced) add(name);
  targetLiterals(req.task, values);
  givenUnderSecretNames(req.metadata[metadataKeys.userOverrides], values);
  givenUnderSecretNames(req.metadata[metadataKeys.seeds], values);
  return [...values].filter((v) => v.length >= minSecretLength).sort((a, b) => b.length - a.length);
};

const redactString = (s: string, secrets: readonly string[]): string => {
  let out = s;
  for (const secret of secrets) if (out.includes(secret)) out = out.replaceAll(secret, redacted);
  return out;
};

// Copy on write: a value holding no secret comes back as itself, so the common case allocates nothing.
const redactValue = (value: unknown, secrets: readonly string[]): unknown => {
  if (typeof value === 'string') return redactString(value, secrets);
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const r = redactValue(value[i], secrets);
      if (r === value[i]) continue;
      out ??= [...value];
      out[i] = r;
    }
    return out ?? value;
  }
  if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    // Entries, not assignments: a `__proto__` key of user data must stay a plain property.
    let out: [string, unknown][] | undefined;
    for (const key in record) {
      const v = record[key];
      const rk = redactString(key, secrets);
      const rv = redactValue(v, secrets);
      if (out === undefined) {
        if (rk === key && rv === v) continue;
        // The first key or value holding a secret: the keys before it are copied as they are.
        out = [];
        for (const earlier in record) {
          if (earlier === key) break;
          out.push([earlier, record[earlier]]);
        }
      }
      out.push([rk, rv]);
    }
    return out ? Object.fromEntries(out) : value;
  }
  return value;
};

/**
 * The value with every secret replaced, in strings and keys alike. Parts without a secret are shared with
 * the input, not copied: treat the result as read-only.
 */
export const redact = <T>(value: T, secrets: readonly string[]): T =>
  secrets.length === 0 ? value : (redactValue(value, secrets) as T);

/** What the store keeps of a submitted run: its task, metadata and starting context, its `secrets` redacted. */
export const storedRequest = (
  req: Pick<RunRequest, 'task' | 'metadata' | 'context'>,
  secrets: readonly string[],
): { spec: JsonObject; metadata: JsonObject; context: JsonObject } => ({
  spec: redact(req.task as unknown as JsonObject, secrets),
  metadata: redact(req.metadata, secrets),
  context: redact(req.context, secrets),
});
