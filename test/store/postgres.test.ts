import { describe, expect, it } from 'vitest';
import { openPostgresStore } from '../../src/store/postgres.js';
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
  },
);
