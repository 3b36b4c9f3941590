/**
 * "Did you mean …?" for a name nobody knows: the known name closest to it, when one is close
 * enough to be a typing slip. Closeness is the optimal string alignment distance (Levenshtein's
 * insertions, deletions and substitutions, plus a swap of two neighbouring characters counted as
 * one edit, the commonest slip: WORKRES for WORKERS).
 */

/** Edits (insert, delete, substitute, swap two neighbours) that turn `a` into `b`. */
export function editDistance(a: string, b: string): number {
  // d[i][j]: the distance between the first i characters of a and the first j of b.
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * The candidate nearest to `name`, or undefined when none is within `maxEdits` edits (default: a
 * third of the name's length, at least 1, so short names do not match everything). Ties go to
 * the first candidate, so the answer does not depend on anything but the order given.
 */
export function closest(name: string, candidates: Iterable<string>, maxEdits = Math.max(1, Math.floor(name.length / 3))): string | undefined {
  let best: string | undefined;
  let bestDistance = maxEdits + 1;
  for (const candidate of candidates) {
    const distance = editDistance(name, candidate);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}
