/** "Did you mean" for unknown keys, kinds and types: the nearest known name, if it is plausibly a typo. */

const distance = (a: string, b: string): number => {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row.push(Math.min((prev[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + cost));
    }
    prev = row;
  }
  return prev[b.length] ?? 0;
};

/** The closest candidate within a third of the word's length (at least 2 edits), else undefined. */
export const nearest = (word: string, candidates: Iterable<string>): string | undefined => {
  const limit = Math.max(2, Math.floor(word.length / 3));
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of candidates) {
    const d = distance(word.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return bestDistance <= limit ? best : undefined;
};

/** `did you mean "x"? Known …: a, b, c` — the tail of a hint for an unknown name. */
export const didYouMean = (word: string, candidates: readonly string[], noun: string): string => {
  const guess = nearest(word, candidates);
  const known = `Known ${noun}: ${candidates.join(', ')}`;
  return guess ? `did you mean "${guess}"? ${known}` : known;
};
