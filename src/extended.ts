/**
 * `{ ...base, ...extra }`, built the way V8 builds fast. In V8 11 (Node 20) an object cloned by a spread takes a
 * slow path when a key it lacks is added to it, in the same literal or after: ~0.8 µs in a loop against ~0.1 µs
 * for Object.assign, and its readers pay too. A 5,000-case run spent 3.5% more instructions (valgrind) while two
 * per-case objects (a run request, a prompt step's output) were made that way.
 */
export const extended = <A extends object, B extends object>(base: A, extra: B): Omit<A, keyof B> & B =>
  Object.assign({}, base, extra);
