import { isAbsolute, posix, relative } from 'node:path';
import { forEachRowHead, type SkippedLine } from '../bundle/reader.js';
import type { CaseIdentity, Outcome } from '../records.js';
import { caseKey } from './identity.js';

/** The latest result of one case in an earlier bundle, and how many rows that case has there. */
export interface PriorCase {
  outcome: Outcome;
  fingerprint: string | undefined;
  rows: number;
  /** Kept for failures (to report one the suite no longer has) and rows whose identity was normalised. */
  identity: CaseIdentity | undefined;
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

/**
 * The eval path of an identity as this checkout spells it: repo-relative POSIX. An absolute path under the
 * root is made relative; one from another machine is matched to the plan's eval path it ends with.
 */
const evalPathNormaliser = (root: string, planned: readonly string[]) => {
  const cache = new Map<string, string>();
  return (path: string): string => {
    let normal = cache.get(path);
    if (normal === undefined) {
      normal = toPosix(path);
      if (isAbsolute(path) || /^[A-Za-z]:\//.test(normal)) {
        const rel = toPosix(relative(root, path));
        normal =
          !rel.startsWith('../') && !isAbsolute(rel) ? rel : (planned.find((p) => normal?.endsWith(`/${p}`)) ?? normal);
      }
      normal = posix.normalize(normal).replace(/^\.\//, '');
      cache.set(path, normal);
    }
    return normal;
  };
};

const field = (row: Record<string, unknown>, ...names: string[]): string | undefined => {
  for (const name of names) if (typeof row[name] === 'string') return row[name] as string;
  return undefined;
};

/**
 * Reads an earlier bundle into the latest result per case. One streaming pass: a million-row index costs
 * memory for its distinct cases only. `plannedEvalPaths` lets a bundle from another machine match.
 */
export const readPriorResults = (dir: string, root: string, plannedEvalPaths: readonly string[]): PriorResults => {
  const normalise = evalPathNormaliser(root, plannedEvalPaths);
  const byKey = new Map<string, PriorCase>();
  const byCoarse = new Map<string, PriorCase>();
  const skipped = forEachRowHead(dir, (head) => {
    let map = byKey;
    let key = head.key;
    let identity: CaseIdentity | undefined;
    if (head.evalPath !== undefined) {
      const evalPath = normalise(head.evalPath);
      const failure = head.outcome === 'failed' || head.outcome === 'error';
      // A row written by this version holds the key of its normalised identity; others are re-derived.
      if (evalPath !== head.evalPath || isAbsolute(evalPath) || failure) {
        const row = head.row();
        identity = { ...row.identity, eval: evalPath };
        key = caseKey(identity);
      }
    } else {
      const row = head.row() as unknown as Record<string, unknown>;
      const test = field(row, 'test', 'test_id');
      const target = field(row, 'target');
      if (test === undefined || target === undefined) return;
      map = byCoarse;
      key = coarseKey(test, target);
    }
    const seen = map.get(key);
    if (!seen) {
      map.set(key, { outcome: head.outcome, fingerprint: head.fingerprint, rows: 1, identity });
      return;
    }
    // Updated in place: most keys appear many times, and each row need not leave an object behind.
    seen.outcome = head.outcome;
    seen.fingerprint = head.fingerprint;
    seen.rows++;
    seen.identity = identity;
  });
  return { dir, byKey, byCoarse, skipped };
};
