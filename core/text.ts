/** Small text helpers for messages people read. */

/** `1 step`, `2 steps`: a count with its noun, singular only for exactly one. */
export function plural(count: number, singular: string, pluralForm = `${singular}s`): string {
  return `${count} ${count === 1 ? singular : pluralForm}`;
}

/** A text on one line of at most 100 characters (whitespace runs become one space), for notes. */
export function oneLine(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 100 ? `${line.slice(0, 99)}…` : line;
}
