import type { GroupCursor } from '../store/explorer-reads.js';
import type { Store } from '../store/store.js';
import type { BundleIndex } from './bundle-index.js';
import { type GroupListing, Summaries } from './summaries.js';

/** Where one run's results are read: the project's store, or the index of a bundle folder holding them. */
export interface Source {
  store: Store;
  summaries: Summaries;
  /** The bundle folder of a run known only from its bundle: its artifacts are read there. */
  bundleDir?: string;
}

/** The project's store first, then the runs only bundle folders hold. */
export class Sources {
  private readonly main: Source;
  private readonly bundled: Source | undefined;

  constructor(
    store: Store,
    private readonly bundles?: BundleIndex,
  ) {
    this.main = { store, summaries: new Summaries(store) };
    this.bundled = bundles && { store: bundles.store, summaries: new Summaries(bundles.store) };
  }

  /** The project's store, where runs start and are canceled. */
  get store(): Store {
    return this.main.store;
  }

  of(groupId: string): Source {
    const bundleDir = this.bundles?.bundleOf(groupId);
    return bundleDir && this.bundled ? { ...this.bundled, bundleDir } : this.main;
  }

  /** The newest runs of both (or those listed after `before`), newest first, as the store orders them. */
  async groups(limit: number, before?: GroupCursor): Promise<GroupListing[]> {
    const [own, bundled] = await Promise.all([
      this.main.summaries.groups(limit, before),
      this.bundled?.summaries.groups(limit, before) ?? [],
    ]);
    const newestFirst = (a: GroupListing, b: GroupListing) =>
      b.createdAt - a.createdAt || (b.groupId > a.groupId ? 1 : b.groupId < a.groupId ? -1 : 0);
    return bundled.length === 0 ? own : [...own, ...bundled].sort(newestFirst).slice(0, limit);
  }
}
