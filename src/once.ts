/**
 * `make`'s value, made on the first call and kept. For what a module would otherwise build as it loads though few
 * commands use it: a registry's every entry loads with it, and a zod schema costs ~20 us per node to build, in
 * code that has not yet warmed up (an eval run built ~1,000 of them, over half for kinds it never met).
 */
export const once = <T>(make: () => T): (() => T) => {
  let made: { value: T } | undefined;
  return () => {
    made ??= { value: make() };
    return made.value;
  };
};
