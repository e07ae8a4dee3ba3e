/**
 * Parse options for a schema parsed once per command: a file's top level, proctor.toml, a target's config. On the
 * first parse of an object schema zod compiles a parser for it (`new Function`), which costs more than one parse
 * without it: ~20 ms for an eval file's top level. Schemas parsed per test or per case keep the compiled parser.
 */
export const parsedOnce = { jitless: true } as const;
