import type { z } from 'zod';
import { InputError, type SourcePosition } from '../errors.js';
import { didYouMean } from './suggest.js';
import { keysAt } from './zod-walk.js';

export type Path = readonly (string | number)[];

/** `tests[2].assert[0].type`: how a location inside a file is named in messages. */
const pathLabel = (path: Path): string =>
  path.reduce<string>((acc, seg) => (typeof seg === 'number' ? `${acc}[${seg}]` : acc ? `${acc}.${seg}` : seg), '');

const valueAt = (value: unknown, path: Path): unknown => {
  let at = value;
  for (const seg of path) {
    if (at === null || typeof at !== 'object') return undefined;
    at = (at as Record<string | number, unknown>)[seg];
  }
  return at;
};

/**
 * A parsed input file (YAML, TOML, a JSONL line, a CSV cell) that can say where a value came from, so every
 * error names `file:line:col` and the checks above it do not care which format they read.
 */
export abstract class Source {
  constructor(
    /** The file as messages print it: root-relative POSIX. */
    readonly display: string,
    readonly value: unknown,
  ) {}

  /** The position of the value at `path` (or of its key), else of the nearest enclosing node. */
  abstract pos(path: Path, which?: 'key' | 'value'): SourcePosition;

  fail(path: Path, message: string, hint: string, which: 'key' | 'value' = 'value'): InputError {
    return new InputError(message, this.pos(path, which), hint);
  }

  /** An unknown key among `allowed`, as an error at that key; undefined when every key is known. */
  unknownKey(path: Path, object: Record<string, unknown>, allowed: readonly string[]): InputError | undefined {
    const key = Object.keys(object).find((k) => !allowed.includes(k));
    if (key === undefined) return undefined;
    const where = path.length ? ` in ${pathLabel(path)}` : '';
    return this.fail(
      [...path, key],
      `unknown key "${key}"${where}`,
      `remove it; ${didYouMean(key, allowed, 'keys')}`,
      'key',
    );
  }

  /** The first zod issue as an InputError at its node; `schema` names the allowed keys in the hint. */
  zodError(error: z.ZodError, base: Path, schema: z.ZodType): InputError {
    const issue = error.issues[0];
    if (!issue) return this.fail(base, 'invalid value', 'check this value against the documentation');
    return this.issueError(issue, base, schema);
  }

  private issueError(issue: z.core.$ZodIssue, base: Path, schema: z.ZodType): InputError {
    const at = [...base, ...issue.path.filter((p): p is string | number => typeof p !== 'symbol')];
    if (
      (issue.code === 'invalid_type' || issue.code === 'invalid_union') &&
      at.length > 0 &&
      valueAt(this.value, at) === undefined
    ) {
      const key = String(at[at.length - 1]);
      const expected = issue.code === 'invalid_type' ? issue.expected : 'see the documentation';
      return this.fail(at.slice(0, -1), `missing required key "${key}"`, `add \`${key}\` (${expected})`);
    }
    // Of a union's branches, report the one the value was meant for: the first that got past its type check.
    if (issue.code === 'invalid_union' && issue.errors.length > 0) {
      const meant = issue.errors.find(
        (branch) => branch[0] && (branch[0].code !== 'invalid_type' || branch[0].path.length > 0),
      );
      const first = meant?.[0];
      const rel = issue.path.filter((p): p is string | number => typeof p !== 'symbol');
      if (first) return this.issueError({ ...first, path: [...rel, ...first.path] }, base, schema);
    }
    const rel = issue.path.filter((p): p is string | number => typeof p !== 'symbol');
    const path = [...base, ...rel];
    if (issue.code === 'unrecognized_keys') {
      const key = issue.keys[0] ?? '';
      const allowed = keysAt(schema, rel);
      // The key zod names: the mapping may hold keys that another schema took (a step's `id` and `type`).
      return this.unknownKey(path, { [key]: null }, allowed) ?? this.fail(path, `unknown key "${key}"`, 'remove it');
    }
    const label = pathLabel(path) || 'the document';
    return this.fail(path, `${label}: ${issue.message}`, hintFor(issue, label));
  }
}

/** A value whose parts all come from one place, e.g. a CSV cell turned into an assertion. */
export class PointSource extends Source {
  constructor(
    value: unknown,
    private readonly at: SourcePosition,
  ) {
    super(at.file, value);
  }

  pos(): SourcePosition {
    return this.at;
  }
}

/** The fix for a size limit, in the words of what is limited: a number's value, a list's items, a text's length. */
const bound = (
  issue: z.core.$ZodIssueTooSmall | z.core.$ZodIssueTooBig,
  within: string,
  beyond: string,
  limit: string,
  label: string,
): string => {
  // An exclusive bound (`.positive()`) is not "at least 0": 0 itself is what was refused.
  const bounded = issue.inclusive === false ? beyond : within;
  if (issue.origin === 'array' || issue.origin === 'set')
    return `give ${label} ${bounded} ${limit} item${limit === '1' ? '' : 's'}`;
  if (issue.origin === 'string') return `make ${label} ${bounded} ${limit} character${limit === '1' ? '' : 's'} long`;
  return `use a value ${issue.inclusive === false ? beyond : `of ${within}`} ${limit} for ${label}`;
};

const hintFor = (issue: z.core.$ZodIssue, label: string): string => {
  switch (issue.code) {
    case 'invalid_type':
      return `make ${label} a${/^[aeiou]/.test(issue.expected) ? 'n' : ''} ${issue.expected}`;
    case 'too_small':
      return bound(issue, 'at least', 'greater than', String(issue.minimum), label);
    case 'too_big':
      return bound(issue, 'at most', 'less than', String(issue.maximum), label);
    case 'invalid_value':
      return `use one of: ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
    case 'invalid_format':
      return `write ${label} in the ${issue.format} format`;
    default:
      return `fix ${label}`;
  }
};
