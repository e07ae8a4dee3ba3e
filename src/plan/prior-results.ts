import { isAbsolute, posix, relative } from 'node:path';
import {
  type LatestEntry,
  type LatestIndex,
  type PendingLatest,
  readLatest,
  startReadLatest,
} from '../bundle/latest-rows.js';
import { readRowsAt, type SkippedLine } from '../bundle/reader.js';
import { InputError } from '../errors.js';
import type { CaseIdentity } from '../records.js';
import { caseKey } from './identity.js';
import { selectBundle } from './select-bundle.js';
import type { ProjectConfig } from './spec.js';

/** The latest result of one case in an earlier bundle, how many rows that case has there, and where. */
export interface PriorCase extends LatestEntry {
  /** Set when the eval path was normalised (the row's own identity is then out of date). */
  identity?: CaseIdentity;
}

export interface PriorResults {
  dir: string;
  /** By precise key, re-derived from each row's identity with its eval path normalised. */
  byKey: Map<string, PriorCase>;
  /** Rows that carry no identity at all (older formats), by their coarse `test::target`. */
  byCoarse: Map<string, PriorCase>;
  skipped: SkippedLine[];
}

export const coarseKey = (test: string, target: string): string => `${test}::${target}`;

const toPosix = (p: string): string => p.replaceAll('\\', '/');

interface EvalPath {
  normal: string;
  /** False when the row's key was derived from another spelling of the path and must be derived again. */
  asWritten: boolean;
}

/**
 * The eval path of an identity as this checkout spells it: repo-relative POSIX. An absolute path under the
 * root is made relative; one from another machine is matched to the plan's eval path it ends with. Worked
 * out once per distinct path: a million rows name a handful.
 */
const evalPathNormaliser = (root: string, planned: readonly string[]) => {
  const cache = new Map<string, EvalPath>();
  return (path: string): EvalPath => {
    let known = cache.get(path);
    if (known === undefined) {
      let normal = toPosix(path);
      if (isAbsolute(path) || /^[A-Za-z]:\//.test(normal)) {
        const rel = toPosix(relative(root, path));
        const spelled = normal;
        normal =
          !rel.startsWith('../') && !isAbsolute(rel) ? rel : (planned.find((p) => spelled.endsWith(`/${p}`)) ?? normal);
      }
      normal = posix.normalize(normal).replace(/^\.\//, '');
      known = { normal, asWritten: normal === path && !isAbsolute(normal) };
      cache.set(path, known);
    }
    return known;
  };
};

const field = (row: Record<string, unknown>, ...names: string[]): string | undefined => {
  for (const name of names) if (typeof row[name] === 'string') return row[name] as string;
  return undefined;
};

// Marks a coarse key in the one map the reader fills; a precise key never starts with it.
const coarseTag = '\u0000';

/** How many rows are parsed back at once when their keys must be derived again. */
const batchSize = 4096;

/**
 * The latest result per case with each row's key derived from its own identity: the general reading, for an
 * index whose keys do not each stand for one case (legacy rows without identity, a key's rows naming different
 * eval paths).
 */
const priorByRow = (dir: string, normalise: (path: string) => EvalPath): PriorResults => {
  const identities = new Map<string, CaseIdentity>();
  const index = readLatest(dir, (head) => {
    if (head.evalPath !== undefined) {
      const path = normalise(head.evalPath);
      if (path.asWritten) return head.key;
      const identity = { ...head.row().identity, eval: path.normal };
      const key = caseKey(identity);
      identities.set(key, identity);
      return key;
    }
    const row = head.row() as unknown as Record<string, unknown>;
    const test = field(row, 'test', 'test_id');
    const target = field(row, 'target');
    return test === undefined || target === undefined ? undefined : coarseTag + coarseKey(test, target);
  });
  const byKey = new Map<string, PriorCase>();
  const byCoarse = new Map<string, PriorCase>();
  for (const [key, entry] of index.latest) {
    if (key.startsWith(coarseTag)) {
      byCoarse.set(key.slice(coarseTag.length), entry);
      continue;
    }
    const identity = identities.get(key);
    byKey.set(key, identity ? Object.assign(entry, { identity }) : entry);
  }
  return { dir, byKey, byCoarse, skipped: index.skipped };
};

/**
 * The same reading from the latest row per key, when every key's rows name one eval path: a key is then one
 * case, and only a key whose path is spelled otherwise here has its latest row parsed to derive the key again.
 * Keys that meet under one derived key (a case run here and on another machine) count their rows together, in
 * the order their first rows were written.
 */
const priorByKey = (index: LatestIndex, normalise: (path: string) => EvalPath): Map<string, PriorCase> => {
  const respelled: LatestEntry[] = [];
  for (const entry of index.latest.values()) if (!normalise(entry.evalPath as string).asWritten) respelled.push(entry);
  // A bundle this checkout wrote: every key stands as it is.
  if (respelled.length === 0) return index.latest;
  const identities = new Map<LatestEntry, CaseIdentity>();
  for (let i = 0; i < respelled.length; i += batchSize) {
    const batch = respelled.slice(i, i + batchSize);
    readRowsAt(index.dir, batch).forEach((row, j) => {
      identities.set(batch[j] as LatestEntry, { ...row.identity, eval: normalise(row.identity.eval).normal });
    });
  }
  const byKey = new Map<string, PriorCase>();
  for (const [written, entry] of index.latest) {
    const identity = identities.get(entry);
    const key = identity ? caseKey(identity) : written;
    const seen = byKey.get(key);
    if (!seen) {
      byKey.set(key, identity ? Object.assign(entry, { identity }) : entry);
      continue;
    }
    const rows = seen.rows + entry.rows;
    if (entry.offset > seen.offset) Object.assign(seen, entry);
    seen.rows = rows;
    if (identity) seen.identity = identity;
  }
  return byKey;
};

/**
 * Starts reading the bundle a `--resume` or `--rerun-failed` selector names, before the plan loads its suite
 * (a large index is read on another thread meanwhile). Undefined when the selector names no bundle: the plan
 * reports that where it selects the cases, as it would without this head start.
 */
export const startPriorRead = (
  selector: string | undefined,
  config: ProjectConfig,
  cwd: string,
): PendingLatest | undefined => {
  if (selector === undefined) return undefined;
  try {
    return startReadLatest(selectBundle(selector, config, cwd));
  } catch (error) {
    if (error instanceof InputError) return undefined;
    throw error;
  }
};

/**
 * Reads an earlier bundle into the latest result per case, through the bundle's one latest-row reader: a
 * streaming pass that parses almost no row, so a million-row index costs memory for its distinct cases only.
 * `plannedEvalPaths` lets a bundle from another machine match; `started` is startPriorRead's read, used when it
 * is of this bundle.
 */
export const readPriorResults = (
  dir: string,
  root: string,
  plannedEvalPaths: readonly string[],
  started?: PendingLatest,
): PriorResults => {
  const normalise = evalPathNormaliser(root, plannedEvalPaths);
  const index = started?.dir === dir ? started.result() : readLatest(dir);
  let oneCasePerKey = !index.pathsDiffer;
  for (const entry of index.latest.values()) if (entry.evalPath === undefined) oneCasePerKey = false;
  return oneCasePerKey
    ? { dir, byKey: priorByKey(index, normalise), byCoarse: new Map(), skipped: index.skipped }
    : priorByRow(dir, normalise);
};

/** The identities of earlier cases, read back from their latest rows (for reports, so only a few). */
export const priorIdentities = (prior: PriorResults, cases: readonly PriorCase[]): CaseIdentity[] => {
  const unread = cases.filter((c) => !c.identity);
  const read = readRowsAt(prior.dir, unread);
  let next = 0;
  return cases.map((c) => c.identity ?? (read[next++]?.identity as CaseIdentity));
};
