/** Small text helpers for messages people read. */

/** `1 step`, `2 steps`: a count with its noun, singular only for exactly one. */
export function plural(count: number, singular: string, pluralForm = `${singular}s`): string {
  return `${count} ${count === 1 ? singular : pluralForm}`;
}
