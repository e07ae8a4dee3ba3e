/**
 * Sets `key` as the newest entry of `map`, dropping the oldest once it holds more than `max`: a cache whose
 * memory is bounded by `max`, never by how many cases a run has.
 */
export const remember = <K, V>(map: Map<K, V>, key: K, value: V, max: number): void => {
  map.delete(key);
  map.set(key, value);
  if (map.size > max) map.delete(map.keys().next().value as K);
};
