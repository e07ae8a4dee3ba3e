import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { openPostgresStore, poolSize } from '../../src/store/postgres.js';
import { emptyPostgresDatabase, storeBackends } from '../support/store-backends.js';

const postgres = (await storeBackends()).find((b) => b.name === 'postgres');

describe.skipIf(postgres?.unavailable)(
  `PostgreSQL store${postgres?.unavailable ? `: ${postgres.unavailable}` : ''}`,
  () => {
    it('opens from several processes at once on a fresh database (workers starting together)', async () => {
      const database = await emptyPostgresDatabase();
      try {
        const opened = await Promise.allSettled(Array.from({ length: 6 }, () => openPostgresStore(database.url)));
        for (const o of opened) if (o.status === 'fulfilled') await o.value.close();
        expect(opened.filter((o) => o.status === 'rejected').map((o) => String(o.reason))).toEqual([]);
      } finally {
        await database.drop();
      }
    });

    it("opens without loading Node's fetch (undici), which pg's Cloudflare check would load at every start", async () => {
      const database = await emptyPostgresDatabase();
      try {
        // In a process of its own: this one may have loaded undici already.
        const store = fileURLToPath(new URL('../../src/store/postgres.ts', import.meta.url));
        const probe = `
          const { openPostgresStore } = await import(${JSON.stringify(store)});
          await (await openPostgresStore(${JSON.stringify(database.url)})).close();
          console.log(JSON.stringify({
            undici: process.moduleLoadList.some((m) => m.includes('undici')),
            navigator: 'navigator' in globalThis,
          }));`;
        const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', probe], {
          encoding: 'utf8',
        });
        expect(child.status, child.stderr).toBe(0);
        expect(JSON.parse(child.stdout)).toEqual({ undici: false, navigator: false });
      } finally {
        await database.drop();
      }
    });

    it('holds at most a few connections, named for Proctor, however many queries a process has in flight', async () => {
      const database = await emptyPostgresDatabase();
      const store = await openPostgresStore(database.url);
      const watcher = new pg.Client({ connectionString: database.url });
      await watcher.connect();
      try {
        // A worker's cases commit, count and renew at once: fifty queries in flight, as a busy follower has.
        await Promise.all(Array.from({ length: 50 }, (_, i) => store.countActive(`group-${i}`)));
        const { rows } = await watcher.query<{ name: string; n: string }>(
          `select application_name as name, count(*) as n from pg_stat_activity
            where datname = current_database() and pid <> pg_backend_pid() group by application_name`,
        );
        expect(rows.map((r) => [r.name, Number(r.n)])).toEqual([['proctor', poolSize]]);
      } finally {
        await watcher.end();
        await store.close();
        await database.drop();
      }
    });
  },
);
