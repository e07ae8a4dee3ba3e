import { pathToFileURL } from 'node:url';

/**
 * Where bin/proctor.js puts its own `import()`: the bundle it loads runs as a script compiled with V8's code cache,
 * and a script's `import()` needs a flag Node 20 keeps experimental. From the TypeScript sources (tests) there is
 * none, and this module's own `import()` serves.
 */
const hook = Symbol.for('proctor.import');

type Importer = (url: string) => Promise<Record<string, unknown>>;

/** A module of the project's (a module step, a transform) by its absolute path, as an ES module import loads it. */
export const importFile = (file: string): Promise<Record<string, unknown>> => {
  const url = pathToFileURL(file).href;
  const importer = (globalThis as { [hook]?: Importer })[hook];
  return importer ? importer(url) : (import(url) as Promise<Record<string, unknown>>);
};
