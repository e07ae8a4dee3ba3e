import { redacted } from '../targets/secrets.js';

// Names of variables that hold credentials by convention; their values never reach the store or a file.
const secretName = /(API_?KEY|TOKEN|SECRET|PASSW(OR)?D|CREDENTIAL|PRIVATE_?KEY|AUTH)/i;
// Shorter values would redact ordinary words out of outputs ("on", "yes", a port number).
const minSecretLength = 6;
const reference = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-[^}]*)?\}/g;

const referencedNames = (value: unknown, out: Set<string>): void => {
  if (typeof value === 'string') {
    for (const m of value.matchAll(reference)) out.add(m[1] as string);
  } else if (Array.isArray(value)) for (const v of value) referencedNames(v, out);
  else if (value !== null && typeof value === 'object') for (const v of Object.values(value)) referencedNames(v, out);
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

/**
 * The secret values of a run: every variable the task references as `${VAR}` (target configs, exec env) and
 * every variable whose name says it is a credential. Longest first, so a secret containing another is cut whole.
 */
export const secretValues = (env: Readonly<Record<string, string | undefined>>, spec: unknown): string[] => {
  const names = new Set<string>(credentialNames(env));
  referencedNames(spec, names);
  const values = new Set<string>();
  for (const name of names) {
    const v = env[name];
    if (v !== undefined && v.length >= minSecretLength) values.add(v);
  }
  return [...values].sort((a, b) => b.length - a.length);
};

const redactString = (s: string, secrets: readonly string[]): string => {
  let out = s;
  for (const secret of secrets) if (out.includes(secret)) out = out.replaceAll(secret, redacted);
  return out;
};

/** A copy of a JSON-like value with every secret replaced, in strings and keys alike. */
export const redact = <T>(value: T, secrets: readonly string[]): T => {
  if (secrets.length === 0) return value;
  if (typeof value === 'string') return redactString(value, secrets) as T;
  if (Array.isArray(value)) return value.map((v) => redact(v, secrets)) as T;
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[redactString(k, secrets)] = redact(v, secrets);
    return out as T;
  }
  return value;
};
