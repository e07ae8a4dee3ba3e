import { loadProjectConfig } from '../../plan/config.js';
import type { ProjectConfig } from '../../plan/spec.js';
import { openStore } from '../../store/open.js';
import type { Store } from '../../store/store.js';

/** Opens the project's store for one `runs` command and closes it however the command ends. */
export const withRunsStore = async (use: (store: Store, config: ProjectConfig) => Promise<number>): Promise<number> => {
  const config = loadProjectConfig(process.cwd(), process.env);
  const store = await openStore(config.store);
  try {
    return await use(store, config);
  } finally {
    await store.close();
  }
};
