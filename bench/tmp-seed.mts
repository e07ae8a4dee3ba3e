import { manyCases, seedGroup } from '../test/support/seed-results.js';
await seedGroup('/tmp/seedtry.db', 'big', manyCases(100_000));
