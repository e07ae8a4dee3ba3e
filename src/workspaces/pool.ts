import { randomBytes } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { CanceledError } from '../errors.js';
import type { RunOwner } from '../store/store.js';
import { type MaterialiseOptions, materialise } from './materialise.js';
import { pruneEmpty, writeOwnerFile } from './owner-file.js';
import { resetSlot } from './reset.js';
import type { SlotRef } from './slot.js';
import { type ResolvedSpec, specKey } from './spec.js';

/** The run a slot is lent to. */
export interface Lease {
  runId: string;
  instanceId: string;
}

export interface PoolsOptions {
  /** Written beside every slot, so `runs gc` can tell a dead process's slots. */
  owner: RunOwner;
  /** Most slots of one spec: the number of cases this process can have in flight. */
  maxSlots: number;
}

/** The folder of every pool under a work root. */
export const poolsDir = (workRoot: string): string => path.join(workRoot, 'pool');

/** Removes a slot's directory and the pool folders it leaves empty. */
export const removeSlot = async (dir: string): Promise<void> => {
  await rm(dir, { recursive: true, force: true });
  await pruneEmpty(path.dirname(dir), path.dirname(path.dirname(path.dirname(dir))));
};

/**
 * The slots of one spec: each materialised once, lent to one case at a time and reset to its baseline before
 * it is lent again. A reset runs after the case has been recorded, off its critical path; a slot whose reset
 * fails is removed and a later case materialises a new one. With `pool: false` nothing is reused.
 */
class Pool {
  private readonly idle: SlotRef[] = [];
  private readonly lent = new Map<string, SlotRef>();
  private readonly waiters = new Set<() => void>();
  /** Slots that exist or are being made: lent, idle, resetting or materialising. */
  private count = 0;
  private seq = 0;
  readonly pending = new Set<Promise<void>>();

  constructor(
    readonly dir: string,
    private readonly spec: ResolvedSpec,
    private readonly o: PoolsOptions,
  ) {}

  async acquire(lease: Lease, m: MaterialiseOptions): Promise<SlotRef> {
    for (;;) {
      if (m.signal.aborted) throw new CanceledError();
      const slot = this.idle.pop();
      if (slot) return this.lend(slot, lease);
      if (this.count < this.o.maxSlots) return this.lend(await this.make(lease, m), lease);
      await this.wait(m.signal);
    }
  }

  owns(slot: SlotRef): boolean {
    return this.lent.has(slot.id);
  }

  /** Takes a lent slot back: reset (or, unpooled, removed) in the background. */
  release(slot: SlotRef): void {
    const known = this.lent.get(slot.id);
    this.lent.delete(slot.id);
    const work = (async () => {
      if (known && this.spec.pool) {
        try {
          await resetSlot(known);
          await writeOwnerFile(known.dir, { owner: this.o.owner, run_id: null, instance_id: null });
          this.idle.push(known);
          return;
        } catch {
          // Never lent dirty: the slot goes, and the next case that needs one materialises it afresh.
        }
      }
      await removeSlot(slot.dir);
      if (known) this.count--;
    })().finally(() => {
      this.pending.delete(work);
      this.wake();
    });
    this.pending.add(work);
  }

  /** `--keep`: the slot leaves the pool as it is; whoever holds the run removes it. */
  detach(slot: SlotRef): void {
    if (!this.lent.delete(slot.id)) return;
    this.count--;
    this.wake();
  }

  async close(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
    const idle = this.idle.splice(0);
    this.count -= idle.length;
    await Promise.all(idle.map((s) => removeSlot(s.dir)));
  }

  private async lend(slot: SlotRef, lease: Lease): Promise<SlotRef> {
    this.lent.set(slot.id, slot);
    await writeOwnerFile(slot.dir, { owner: this.o.owner, run_id: lease.runId, instance_id: lease.instanceId });
    return slot;
  }

  private async make(lease: Lease, m: MaterialiseOptions): Promise<SlotRef> {
    this.count++;
    // Unique across processes sharing the work root: two commands may pool the same spec at once.
    const id = `${process.pid}-${++this.seq}-${randomBytes(3).toString('hex')}`;
    const dir = path.join(this.dir, id);
    try {
      await mkdir(dir, { recursive: true });
      // Before anything slow: a process killed mid-setup leaves a slot that gc can attribute.
      await writeOwnerFile(dir, { owner: this.o.owner, run_id: lease.runId, instance_id: lease.instanceId });
      return await materialise(this.spec, { pool: path.basename(this.dir), id, dir }, m);
    } catch (error) {
      await removeSlot(dir);
      this.count--;
      this.wake();
      throw error;
    }
  }

  private wait(signal: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      const done = () => {
        this.waiters.delete(done);
        signal.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = () => {
        this.waiters.delete(done);
        reject(new CanceledError());
      };
      this.waiters.add(done);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  private wake(): void {
    for (const w of [...this.waiters]) w();
  }
}

/** Every pool of one process, by work root and spec. The engine's services hold one. */
export class WorkspacePools {
  private readonly pools = new Map<string, Pool>();

  constructor(private readonly o: PoolsOptions) {}

  acquire(workRoot: string, spec: ResolvedSpec, lease: Lease, m: MaterialiseOptions): Promise<SlotRef> {
    const dir = path.join(poolsDir(workRoot), specKey(spec));
    let pool = this.pools.get(dir);
    if (!pool) {
      pool = new Pool(dir, spec, this.o);
      this.pools.set(dir, pool);
    }
    return pool.acquire(lease, m);
  }

  /** Returns a slot after its case. A slot this process did not lend (a run resumed from another) is removed. */
  async release(slot: SlotRef): Promise<void> {
    const pool = this.pools.get(path.dirname(slot.dir));
    if (pool?.owns(slot)) pool.release(slot);
    else await removeSlot(slot.dir);
  }

  detach(slot: SlotRef): void {
    this.pools.get(path.dirname(slot.dir))?.detach(slot);
  }

  /** Waits for resets in flight, then removes every idle slot: nothing outlives the process that pooled it. */
  async close(): Promise<void> {
    await Promise.all([...this.pools.values()].map((p) => p.close()));
  }
}
