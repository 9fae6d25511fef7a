/**
 * The text of the stored summary message (spec S-COMPACT stage 2): a header naming the compacted
 * messages, the model's summary with its six sections in order, and the files-modified list
 * derived from the tool log. Missing sections are written as "(not stated)" rather than the
 * summary being thrown away: a summary with five good sections is worth more than none. A reply
 * with none of the six headings is no summary at all; see {@link isUsableSummary}.
 */
import { type FilesModified, renderFilesModified } from './files-modified';
import { clipText, oneLine } from './text-excerpt';

/** The sections every summary has, in this order, as `## ` headings. */
export const SUMMARY_SECTIONS = [
  'Goal',
  'Decisions and findings',
  'Files modified',
  'Current state',
  'Next steps',
  'References',
] as const;

/** One of {@link SUMMARY_SECTIONS}. */
export type SummarySection = (typeof SUMMARY_SECTIONS)[number];

/** The body written for a section the summary left out or left empty. */
export const NOT_STATED = '(not stated)';

/** Heading of the list derived from the tool log, apart from the model's own Files modified section. */
export const TOOL_LOG_FILES_HEADING = '## Files modified (from the tool log)';

/** Cap on the focus topic quoted in the header. */
const TOPIC_MAX_CHARS = 200;

/** A summary split into its sections. */
export interface ParsedSummary {
  /** Text before the first section heading. */
  preamble: string;
  /** Body of each section found (duplicates concatenated), trimmed. */
  sections: Partial<Record<SummarySection, string>>;
  /** Sections with no heading, in canonical order. */
  missing: SummarySection[];
  /** Sections with a heading but no text, in canonical order. */
  empty: SummarySection[];
}

// Models vary the markup (`# Goal`, `### Goal:`, `**Goal**`); any of these counts as the heading.
const HASH_HEADING = /^ {0,3}#{1,6}\s*(.*?)\s*#*\s*$/;
const BOLD_HEADING = /^ {0,3}\*\*(.+?):?\*\*:?\s*$/;
const FENCE = /^ {0,3}(`{3,}|~{3,})/;

/** A fence closes with the same character, at least as many times (CommonMark). */
function closesFence(open: string, marker: string): boolean {
  return marker[0] === open[0] && marker.length >= open.length;
}

function sectionOf(line: string): SummarySection | undefined {
  const match = HASH_HEADING.exec(line) ?? BOLD_HEADING.exec(line);
  if (!match) return undefined;
  const name = match[1].replace(/\*\*/g, '').replace(/:$/, '').trim().toLowerCase();
  return SUMMARY_SECTIONS.find((section) => section.toLowerCase() === name);
}

/** Splits a summary into the six sections and reports the missing and empty ones. */
export function parseSummarySections(text: string): ParsedSummary {
  const bodies = new Map<SummarySection, string[]>();
  const preamble: string[] = [];
  let current: string[] = preamble;
  let fence: string | undefined;
  for (const line of text.replace(/\r\n/g, '\n').split('\n')) {
    // A heading inside a code block is quoted output (e.g. an error excerpt), not a section.
    const marker = FENCE.exec(line)?.[1];
    const closes = marker !== undefined && fence !== undefined && closesFence(fence, marker);
    const inside = fence !== undefined;
    if (fence === undefined && marker !== undefined) fence = marker;
    else if (closes) fence = undefined;
    const section = inside || marker !== undefined ? undefined : sectionOf(line);
    if (section === undefined) {
      current.push(line);
      continue;
    }
    // A repeated heading continues the same section: nothing the model wrote is dropped.
    current = bodies.get(section) ?? [];
    if (current.length > 0) current.push('');
    bodies.set(section, current);
  }
  const sections: Partial<Record<SummarySection, string>> = {};
  for (const [section, lines] of bodies) sections[section] = lines.join('\n').trim();
  return {
    preamble: preamble.join('\n').trim(),
    sections,
    missing: SUMMARY_SECTIONS.filter((section) => !bodies.has(section)),
    empty: SUMMARY_SECTIONS.filter((section) => sections[section] === ''),
  };
}

/** Whether a reply is a summary at all: at least one of the six sections is there and has text. */
export function isUsableSummary(parsed: ParsedSummary): boolean {
  return SUMMARY_SECTIONS.some((section) => (parsed.sections[section] ?? '') !== '');
}

/** The six sections as `## ` headings in canonical order; missing or empty ones read "(not stated)". */
export function normalizeSummary(parsed: ParsedSummary): string {
  const blocks = parsed.preamble === '' ? [] : [parsed.preamble];
  for (const section of SUMMARY_SECTIONS) {
    const body = parsed.sections[section] ?? '';
    blocks.push(`## ${section}\n${body === '' ? NOT_STATED : body}`);
  }
  return blocks.join('\n\n');
}

/** Input of {@link composeSummaryMessage}. */
export interface ComposeSummaryInput {
  /** The summarizer's reply (or the extracted summary). */
  summaryText: string;
  /** Derived from the tool log of the compacted span. */
  filesModified: FilesModified;
  /** How many stored messages the summary replaces. */
  compactedMessages: number;
  /** Sequence numbers of the first and last compacted message. */
  fromSeq: number;
  toSeq: number;
  /** The focus of `/compact TOPIC`. */
  topic?: string;
}

/** The first line of a summary message: which messages it replaces. */
export function summaryHeader(
  fromSeq: number,
  toSeq: number,
  compactedMessages: number,
  topic?: string,
): string {
  const noun = compactedMessages === 1 ? 'message' : 'messages';
  const focus = topic?.trim() ? `; focus: ${clipText(oneLine(topic.trim()), TOPIC_MAX_CHARS)}` : '';
  return `[goalrun] Summary of messages ${fromSeq}–${toSeq} (compacted: ${compactedMessages} ${noun}${focus})`;
}

/**
 * The text of the stored summary message: the header, the summary's six sections (missing ones
 * as "(not stated)"), and the files-modified list from the tool log under its own heading, so no
 * edited file is forgotten. The list is left out only when the summary's Files modified section
 * already holds it word for word (an extracted summary does), to not say it twice.
 */
export function composeSummaryMessage(input: ComposeSummaryInput): string {
  const parsed = parseSummarySections(input.summaryText);
  const header = summaryHeader(input.fromSeq, input.toSeq, input.compactedMessages, input.topic);
  const derived = renderFilesModified(input.filesModified);
  const blocks = [header, normalizeSummary(parsed)];
  if (!(parsed.sections['Files modified'] ?? '').includes(derived)) {
    blocks.push(`${TOOL_LOG_FILES_HEADING}\n${derived}`);
  }
  return blocks.join('\n\n');
}
