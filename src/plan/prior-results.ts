import { isAbsolute, posix, relative } from 'node:path';
import { forEachRowHead, readRowsAt, type SkippedLine } from '../bundle/reader.js';
import type { CaseIdentity, Outcome } from '../records.js';
import { caseKey } from './identity.js';

/** The latest result of one case in an earlier bundle, how many rows that case has there, and where. */
export interface PriorCase {
  outcome: Outcome;
  fingerprint: string | undefined;
  rows: number;
  /** The latest row's place in index.jsonl, to read its identity back when a report needs it. */
  offset: number;
  length: number;
  /** Set when the eval path was normalised (the row's own identity is then out of date). */
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

/**
 * Reads an earlier bundle into the latest result per case. One streaming pass that parses almost no row:
 * a million-row index costs memory for its distinct cases only. `plannedEvalPaths` lets a bundle from
 * another machine match.
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
      const path = normalise(head.evalPath);
      if (!path.asWritten) {
        identity = { ...head.row().identity, eval: path.normal };
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
      map.set(key, {
        outcome: head.outcome,
        fingerprint: head.fingerprint,
        rows: 1,
        offset: head.offset,
        length: head.length,
        identity,
      });
      return;
    }
    // Updated in place: most keys appear many times, and each row need not leave an object behind.
    seen.outcome = head.outcome;
    seen.fingerprint = head.fingerprint;
    seen.rows++;
    seen.offset = head.offset;
    seen.length = head.length;
    seen.identity = identity;
  });
  return { dir, byKey, byCoarse, skipped };
};

/** The identities of earlier cases, read back from their latest rows (for reports, so only a few). */
export const priorIdentities = (prior: PriorResults, cases: readonly PriorCase[]): CaseIdentity[] => {
  const unread = cases.filter((c) => !c.identity);
  const read = readRowsAt(prior.dir, unread);
  let next = 0;
  return cases.map((c) => c.identity ?? (read[next++]?.identity as CaseIdentity));
};
