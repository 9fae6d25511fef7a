/** The names closest to a mistyped one, for "no session named X; did you mean …" (issue 17). */

/** How many near names an error lists. */
export const NEAREST_NAMES_LISTED = 5;

/** Edit distance (insertions, deletions, substitutions), case-insensitive. */
export function editDistance(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  let previous = Array.from({ length: y.length + 1 }, (_, i) => i);
  for (let i = 1; i <= x.length; i++) {
    const current = [i];
    for (let j = 1; j <= y.length; j++) {
      const substitution = previous[j - 1] + (x[i - 1] === y[j - 1] ? 0 : 1);
      current.push(Math.min(previous[j] + 1, current[j - 1] + 1, substitution));
    }
    previous = current;
  }
  return previous[y.length];
}

/**
 * The names nearest to `wanted`, closest first: a name containing it (or contained in it) counts as
 * closer than any edit distance, ties keep the given order (newest first).
 */
export function nearestNames(wanted: string, names: string[], count = NEAREST_NAMES_LISTED): string[] {
  const lower = wanted.toLowerCase();
  const scored = [...new Set(names)].map((name, index) => {
    const other = name.toLowerCase();
    const contains = other.includes(lower) || lower.includes(other);
    return { name, index, score: contains ? -1 : editDistance(wanted, name) };
  });
  scored.sort((a, b) => a.score - b.score || a.index - b.index);
  return scored.slice(0, count).map((each) => each.name);
}
