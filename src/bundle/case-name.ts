import type { CaseIdentity } from '../records.js';

/** A case's name within its target: `eval · test · prompt · sample`, the same in every report and export. */
export const caseName = (identity: CaseIdentity): string =>
  `${identity.eval} · ${identity.test} · ${identity.prompt} · ${identity.sample}`;
