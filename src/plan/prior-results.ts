import { isAbsolute, posix, relative } from 'node:path';
import { type LatestEntry, readLatest } from '../bundle/latest-rows.js';
import { readRowsAt, type SkippedLine } from '../bundle/reader.js';
import type { CaseIdentity } from '../records.js';
import { caseKey } from './identity.js';

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

/**
 * Reads an earlier bundle into the latest result per case, through the bundle's one latest-row reader: a
 * streaming pass that parses almost no row, so a million-row index costs memory for its distinct cases only.
 * `plannedEvalPaths` lets a bundle from another machine match.
 */
export const readPriorResults = (dir: string, root: string, plannedEvalPaths: readonly string[]): PriorResults => {
  const normalise = evalPathNormaliser(root, plannedEvalPaths);
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

/** The identities of earlier cases, read back from their latest rows (for reports, so only a few). */
export const priorIdentities = (prior: PriorResults, cases: readonly PriorCase[]): CaseIdentity[] => {
  const unread = cases.filter((c) => !c.identity);
  const read = readRowsAt(prior.dir, unread);
  let next = 0;
  return cases.map((c) => c.identity ?? (read[next++]?.identity as CaseIdentity));
};
