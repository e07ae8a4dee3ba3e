import { InputError } from '../errors.js';
import { isRecord } from '../records.js';
import { type Path, Source } from './source.js';
import { didYouMean } from './suggest.js';

/** The values one instance substitutes for `{{ seed.NAME }}`; `index` (0-based) is always there. */
export type Seeds = Readonly<Record<string, string>>;

const seedRef = /\{\{\s*seed\.([A-Za-z_][A-Za-z0-9_-]*)\s*\}\}/g;

/** `key=value` flags (`--seed`, `--set`) as a map; a later flag for the same key wins. */
export const parseAssignments = (flag: string, values: readonly string[]): Record<string, string> => {
  const out: Record<string, string> = {};
  for (const v of values) {
    const eq = v.indexOf('=');
    if (eq <= 0) throw new InputError(`${flag} "${v}" is not key=value`, undefined, `write ${flag} name=value`);
    out[v.slice(0, eq)] = v.slice(eq + 1);
  }
  return out;
};

/**
 * Each instance's seeds: its index, then the task file's `seeds[index % n]`, then the command's `--seed`
 * flags, which win. Instance i of `--k N` is therefore reproducible from the file and the command alone.
 */
export const instanceSeeds = (
  fileSeeds: readonly Record<string, string | number | boolean>[],
  flags: Readonly<Record<string, string>>,
  k: number,
): Seeds[] =>
  Array.from({ length: k }, (_, index) => {
    const own = fileSeeds.length ? (fileSeeds[index % fileSeeds.length] ?? {}) : {};
    return {
      index: String(index),
      ...Object.fromEntries(Object.entries(own).map(([n, v]) => [n, String(v)])),
      ...flags,
    };
  });

/** A parsed file with seeds substituted into its strings: values change, positions stay those of the file. */
class SeededSource extends Source {
  constructor(
    private readonly inner: Source,
    value: unknown,
  ) {
    super(inner.display, value);
  }

  pos(path: Path, which?: 'key' | 'value') {
    return this.inner.pos(path, which);
  }
}

/**
 * Substitutes `{{ seed.NAME }}` in every string of `source`'s value (step ids and verifier ids included), so
 * the run executes, journals and shows the ids as substituted. An unknown name is an error at its string.
 */
export const substituteSeeds = (source: Source, seeds: Seeds, skip: readonly string[] = []): Source => {
  const known = Object.keys(seeds);
  const walk = (value: unknown, at: Path): unknown => {
    if (typeof value === 'string') {
      return value.replace(seedRef, (_, name: string) => {
        const v = seeds[name];
        if (v === undefined)
          throw source.fail(
            at,
            `unknown seed "${name}"`,
            `pass --seed ${name}=VALUE, or ${didYouMean(name, known, 'seeds')}`,
          );
        return v;
      });
    }
    if (Array.isArray(value)) return value.map((v, i) => walk(v, [...at, i]));
    if (isRecord(value))
      return Object.fromEntries(
        Object.entries(value).map(([k, v]) => [k, at.length === 0 && skip.includes(k) ? v : walk(v, [...at, k])]),
      );
    return value;
  };
  return new SeededSource(source, walk(source.value, []));
};
