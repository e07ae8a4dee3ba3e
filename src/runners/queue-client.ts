// BullMQ and its Redis client, in one module the queue runner imports on use: a command that never reaches the
// queue loads neither, and the CLI's bundle holds neither (scripts/bundle.js makes this module a script of its own,
// required on use). Re-exported by name so the bundle links their CommonJS exports at build time; a dynamic import of
// the packages themselves would give a bundled caller only `default`.
export { DelayedError, Queue, Worker } from 'bullmq';
export { Redis } from 'ioredis';
