import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundleGroups } from '../bundle/groups.js';
import { forEachRowHead } from '../bundle/reader.js';
import type { IndexRow } from '../bundle/row.js';
import { indexFile } from '../bundle/writer.js';
import type { JsonObject } from '../records.js';
import { openSqliteStore } from '../store/sqlite.js';
import type { NewRun, RunFinish, Store } from '../store/store.js';

/** The owner the index names for the runs it records (none of them runs here). */
const indexer = { host: 'bundle', pid: 0, startedAt: 0 };

/** Runs written to the index per transaction. */
const chunk = 1000;

/**
 * The runs whose results live only in bundle folders (pulled from CI, copied from a colleague, a store since
 * reset), indexed in a temporary SQLite store so the explorer serves them through the same reads. Their
 * artifacts stay in the bundle: `bundleOf` says where.
 */
export interface BundleIndex {
  store: Store;
  bundleOf(groupId: string): string | undefined;
  close(): Promise<void>;
}

const attemptOf = (row: IndexRow): number => Number(/\/(\d+)$/.exec(row.artifacts ?? '')?.[1] ?? 1);

const finishOf = (row: IndexRow): RunFinish => ({
  status: row.outcome === 'canceled' ? 'CANCELED' : row.outcome === 'error' ? 'FAILED' : 'COMPLETED',
  outcome: row.outcome,
  ...(typeof row.score === 'number' ? { score: row.score } : {}),
  ...(row.error ? { error: row.error } : {}),
  result: {
    caseKey: row.key,
    attempt: attemptOf(row),
    target: row.identity.target,
    evalPath: row.identity.eval,
    row: row as unknown as JsonObject,
    // The artifacts are read from the bundle folder when asked for, never copied.
    files: {},
  },
});

/** Indexes every bundle under `resultsDir` whose groups `store` does not hold; undefined when there is none. */
export const indexBundles = async (resultsDir: string, store: Store): Promise<BundleIndex | undefined> => {
  const dirs = existsSync(resultsDir)
    ? readdirSync(resultsDir, { withFileTypes: true })
        .filter((d) => d.isDirectory() && existsSync(join(resultsDir, d.name, indexFile)))
        .map((d) => join(resultsDir, d.name))
    : [];
  const bundles = new Map<string, string>();
  const known = new Map<string, boolean>();
  const inStore = async (groupId: string): Promise<boolean> => {
    let has = known.get(groupId);
    if (has === undefined) {
      has = (await store.listGroups({ limit: 1, groupId })).length > 0;
      known.set(groupId, has);
    }
    return has;
  };
  const rows: { row: IndexRow; dir: string }[] = [];
  for (const dir of dirs) {
    // A bundle the CLI wrote names its groups: when the store holds them all, its index need not be read.
    const listed = bundleGroups(dir);
    if (listed.length > 0 && (await Promise.all(listed.map(inStore))).every(Boolean)) continue;
    const found: IndexRow[] = [];
    forEachRowHead(dir, (head) => {
      const row = head.row();
      if (row.identity && typeof row.group_id === 'string' && typeof row.run_id === 'string') found.push(row);
    });
    for (const row of found) {
      if (await inStore(row.group_id)) continue;
      // A group in two bundles (an --output copy) is shown from the first one found.
      if ((bundles.get(row.group_id) ?? dir) !== dir) continue;
      bundles.set(row.group_id, dir);
      rows.push({ row, dir });
    }
  }
  if (rows.length === 0) return undefined;
  const tempDir = mkdtempSync(join(tmpdir(), 'proctor-bundles-'));
  const index = await openSqliteStore(join(tempDir, 'index.db'));
  const seen = new Set<string>();
  for (let i = 0; i < rows.length; i += chunk) {
    const part = rows.slice(i, i + chunk).filter(({ row }) => !seen.has(row.run_id) && seen.add(row.run_id));
    await index.createRuns(
      part.map(
        ({ row }): NewRun => ({
          runId: row.run_id,
          groupId: row.group_id,
          taskId: 'eval',
          instanceId: `bundle-${row.run_id}`,
          target: row.identity.target,
          caseKey: row.key,
          metadata: {},
          spec: {},
          context: {},
        }),
      ),
    );
    const at = (iso: string) => Date.parse(iso) || Date.now();
    // Claimed and finished at the row's own times, so the run shows when it ran, not when it was indexed.
    await Promise.all(
      part.map(async ({ row }) => {
        await index.claimRun(row.run_id, indexer, at(row.started_at));
        await index.finishRun(row.run_id, finishOf(row), at(row.finished_at));
      }),
    );
  }
  return {
    store: index,
    bundleOf: (groupId) => bundles.get(groupId),
    close: async () => {
      await index.close();
      rmSync(tempDir, { recursive: true, force: true });
    },
  };
};
