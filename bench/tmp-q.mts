import { openSqliteStore } from '../src/store/sqlite.js';
const s = await openSqliteStore('/tmp/seedtry.db');
const t = async (name: string, f: () => Promise<unknown>) => { const a = performance.now(); await f(); console.log(name, (performance.now() - a).toFixed(1)); };
for (let i = 0; i < 2; i++) {
await t('listGroups', () => s.listGroups({ limit: 200 }));
await t('listGroups one', () => s.listGroups({ limit: 1, groupId: 'big' }));
await t('progress', () => s.groupProgress('big'));
await t('facets', () => s.caseFacets('big'));
await t('cases p0', () => s.queryCases('big', { offset: 0, limit: 200 }));
await t('cases last', () => s.queryCases('big', { offset: 99800, limit: 200 }));
await t('cases failed', () => s.queryCases('big', { offset: 0, limit: 200, outcome: 'failed', target: 'beta' }));
await t('cases q', () => s.queryCases('big', { offset: 0, limit: 200, q: 'needle-4242' }));
await t('matrix', () => s.caseMatrix('big', 5000));
await t('readResults', () => s.readResults('big', 99990, 200));
}
await s.close();
