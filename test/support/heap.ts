// What a structure keeps alive, counted in bytes of heap (not timed), and a full collection on demand.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');
/** A full garbage collection. */
export const gc = runInNewContext('gc') as () => void;

/** The heap and the memory outside it that objects on it hold (a Buffer's bytes). */
const used = (): number => {
  const { heapUsed, external } = process.memoryUsage();
  return heapUsed + external;
};

/** What `hold`'s result keeps alive: the heap after it, less the heap before, both after full collections. */
export const heapHeld = <T>(hold: () => T): { bytes: number; held: T } => {
  gc();
  gc();
  const before = used();
  const held = hold();
  gc();
  gc();
  return { bytes: used() - before, held };
};
