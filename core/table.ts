/** Plain-text tables for people: the one layout every table of goalrun uses. */

/** How a column is aligned. */
export type ColumnAlign = 'start' | 'end';

/** Code points: the width of a cell where no terminal measures it (the CLI passes display widths). */
function codePoints(text: string): number {
  let count = 0;
  for (const _ of text) count += 1;
  return count;
}

/**
 * Rows as a table: every column as wide as its widest cell, two spaces apart, trailing spaces cut.
 * `align` gives each column's alignment (left by default); `width` measures a cell.
 */
export function formatTable(
  rows: string[][],
  align: readonly ColumnAlign[] = [],
  width: (text: string) => number = codePoints,
): string[] {
  const widths = (rows[0] ?? []).map((_, column) => Math.max(...rows.map((row) => width(row[column] ?? ''))));
  return rows.map((row) =>
    row
      .map((cell, column) => {
        const padding = ' '.repeat(Math.max(0, widths[column] - width(cell)));
        return align[column] === 'end' ? `${padding}${cell}` : `${cell}${padding}`;
      })
      .join('  ')
      .trimEnd(),
  );
}
