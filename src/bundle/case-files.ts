import {
  type ArtifactFile,
  type ArtifactFileHead,
  artifactFiles,
  caseFolder,
  readArtifactHead,
} from './artifact-files.js';
import { readPackedResult, resultAtOf } from './result-pack.js';

/** What locates a case execution's files: its index row (`artifacts`, and `result_at` when packed). */
export type CaseRow = object & { readonly artifacts?: unknown };

const resultName = 'result.json';

/**
 * The files of a case execution: its folder's, or, for a packed case, its result.json alone (when its place in
 * the pack holds one). A bundle written before packing has folders only, and reads as it always did.
 */
export const caseFiles = (bundleDir: string, row: CaseRow): ArtifactFile[] => {
  const at = resultAtOf(row);
  if (at) return readPackedResult(bundleDir, at, 1) ? [{ name: resultName, size: at[1] }] : [];
  const folder = caseFolder(bundleDir, row.artifacts);
  return folder ? artifactFiles(folder) : [];
};

/** The first `chars` characters (all without) of a case execution's file `name`, wherever the bundle keeps it. */
export const readCaseFile = (
  bundleDir: string,
  row: CaseRow,
  name: string,
  chars?: number,
): ArtifactFileHead | undefined => {
  const at = resultAtOf(row);
  if (at) return name === resultName ? readPackedResult(bundleDir, at, chars) : undefined;
  const folder = caseFolder(bundleDir, row.artifacts);
  return folder ? readArtifactHead(folder, name, chars) : undefined;
};

/**
 * A case execution's result.json, its first `maxChars` characters when given: what every reader of a bundle's
 * results goes through, packed or in a folder. Undefined when there is none (or none a bundle from elsewhere
 * may point at).
 */
export const readResultText = (bundleDir: string, row: CaseRow, maxChars?: number): string | undefined =>
  readCaseFile(bundleDir, row, resultName, maxChars)?.text;
