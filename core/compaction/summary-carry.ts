/**
 * Carrying an earlier summary into the next one (spec S-COMPACT: "any earlier summary to merge"; issue
 * 9.1). Every compaction merges the earlier summary: the summarizer is given it whole, and whatever it
 * could not be given (an excerpt for a summary too large for its share), or whenever no model wrote the
 * new summary (the extracted fallback), the earlier sections are carried over verbatim, line by line.
 */
import {
  NOT_STATED,
  parseSummarySections,
  SUMMARY_SECTIONS,
  type SummarySection,
  TOOL_LOG_FILES_HEADING,
} from './summary-text';

/** The header line composeSummaryMessage writes: `[goalrun] Summary of messages 12–40 (…)`. */
const HEADER = /^\[goalrun\] Summary of messages (\d+)–(\d+)/;
/** Bodies that say nothing, which a merge need not carry. */
const EMPTY_BODIES = new Set([NOT_STATED, '(none)', '']);

/** The messages `[from, to]` a stored summary says it replaces, or null when it has no header. */
export function summaryRangeOf(stored: string): [number, number] | null {
  const match = HEADER.exec(stored.trimStart());
  return match ? [Number(match[1]), Number(match[2])] : null;
}

/**
 * A stored summary without what the next summary message writes again itself: the header line and the
 * files-modified list derived from the tool log (the next one derives it from the whole log anew).
 */
export function previousSummaryBody(stored: string): string {
  const lines = stored.replace(/\r\n/g, '\n').split('\n');
  if (HEADER.test(lines[0] ?? '')) lines.shift();
  const derived = lines.findIndex((line) => line.trim() === TOOL_LOG_FILES_HEADING);
  if (derived !== -1) {
    // The derived list runs to the next section heading written after it, if any, else to the end.
    let end = derived + 1;
    while (end < lines.length && !/^#{1,6}\s/.test(lines[end])) end++;
    lines.splice(derived, end - derived);
  }
  return lines.join('\n').trim();
}

/** Lines of `earlier` that `later` does not already hold (compared trimmed), in order. */
function missingLines(earlier: string, later: string): string[] {
  const present = new Set(later.split('\n').map((line) => line.trim()));
  return earlier.split('\n').filter((line) => line.trim() !== '' && !present.has(line.trim()));
}

/**
 * Both summaries in one, section by section: the later one's text, preceded by every line of the
 * earlier one it does not already hold. Nothing either said is lost; nothing is said twice.
 */
export function mergeSummaries(earlier: string, later: string): string {
  const before = parseSummarySections(earlier);
  const after = parseSummarySections(later);
  const body = (section: SummarySection) => {
    const old = (before.sections[section] ?? '').trim();
    const now = (after.sections[section] ?? '').trim();
    const carried = EMPTY_BODIES.has(old) ? [] : missingLines(old, now);
    const kept = EMPTY_BODIES.has(now) && carried.length > 0 ? '' : now;
    return [...carried, ...(kept ? [kept] : [])].join('\n') || NOT_STATED;
  };
  const preamble = [...missingLines(before.preamble, after.preamble), after.preamble]
    .filter((text) => text.trim() !== '')
    .join('\n');
  const blocks = preamble === '' ? [] : [preamble];
  for (const section of SUMMARY_SECTIONS) blocks.push(`## ${section}\n${body(section)}`);
  return blocks.join('\n\n');
}

/**
 * The summary to store: the model's reply when the summarizer saw the earlier summary whole, else the
 * reply merged with the earlier summary verbatim. Without an earlier summary, the reply as it is.
 */
export function carriedSummary(reply: string, earlier: { body: string; whole: boolean } | undefined): string {
  if (!earlier || earlier.body.trim() === '' || earlier.whole) return reply;
  return mergeSummaries(earlier.body, reply);
}
