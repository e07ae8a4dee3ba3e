import { readResultText } from '../../src/bundle/case-files.js';

/** A case's result.json text from its bundle, packed or in its folder (the one reader the CLI uses too). */
export const bundleResultText = (bundleDir: string, row: { artifacts?: unknown }): string => {
  const text = readResultText(bundleDir, row);
  if (text === undefined) throw new Error(`no result.json for ${String(row.artifacts)} in ${bundleDir}`);
  return text;
};

/** The same, parsed. */
export const bundleResult = <T = Record<string, unknown>>(bundleDir: string, row: { artifacts?: unknown }): T =>
  JSON.parse(bundleResultText(bundleDir, row)) as T;
