/**
 * What the summarizer is asked (spec S-COMPACT stage 2): its system prompt, and the request text
 * built from the span being compacted. The summarizer sees the user messages, the assistant's
 * text, tool calls and their results, each bounded so that the whole request fits its window.
 */

import { CHARS_PER_TOKEN } from '../limits';
import type { StoredMessage } from '../messages';
import { estimateTokens } from '../tokens';
import { argsDigest } from './stub';
import { SUMMARY_SECTIONS, type SummarySection } from './summary-text';
import { clipText, excerpt, oneLine } from './text-excerpt';
import {
  SUMMARIZER_ARGS_STRING_SHARE,
  SUMMARIZER_FOCUS_CHARS,
  SUMMARIZER_ITEM_BOUNDS,
  SUMMARIZER_OBJECTIVE_SHARE,
  SUMMARIZER_OBJECTIVE_TOKENS,
  SUMMARIZER_PREVIOUS_SHARE,
} from './text-limits';

const SECTION_GUIDE: Record<SummarySection, string> = {
  Goal: "What the user asked for, with constraints and later changes of direction (quote the user's words where they matter).",
  'Decisions and findings':
    'Choices made and why, what was learned about the code, approaches tried and abandoned.',
  'Files modified': 'Each path changed and what changed in it.',
  'Current state':
    'Test and build status: the exact failing tests and the exact error text, quoted verbatim; what works.',
  'Next steps': 'What remains to be done, in order.',
  References:
    'Spool ids (spool:N) of outputs worth re-reading with the tool-output tool, each with what it holds.',
};

/** System prompt of the summarizer: the six sections, facts only, exact error strings. */
export const SUMMARIZER_SYSTEM_PROMPT = [
  "You summarize part of a coding agent's transcript so that the agent can go on with its goal after the",
  'transcript is compacted. The agent will see only your summary in place of these messages, so it must carry',
  'everything needed to continue.',
  '',
  'Write the summary in Markdown with exactly these six sections, as headings, in this order:',
  ...SUMMARY_SECTIONS.flatMap((section) => [`## ${section}`, SECTION_GUIDE[section]]),
  '',
  'Rules:',
  '- State only facts found in the transcript or the earlier summary. Never invent or guess file contents,',
  '  file state, test results or outcomes; when something is unknown, say that it is unknown.',
  '- Keep exact error strings, failing test names, paths, commands and identifiers verbatim.',
  '- Merge the earlier summary when one is given: keep what still holds, update what changed.',
  '- When a focus is given, cover that topic in more detail.',
  '- Write "(none)" in a section with nothing to say. No preamble and nothing outside the six sections.',
].join('\n');

/** Input of {@link buildSummarizerInput}. */
export interface SummarizerInputOptions {
  /** The goal's objective (the original task). */
  objective: string;
  /** The messages being compacted, oldest first. */
  span: StoredMessage[];
  /** The summary an earlier compaction left, to merge. */
  previousSummary?: string;
  /** The focus of `/compact TOPIC`. */
  focus?: string;
  /** The request text must estimate (core/tokens.ts) at or under this many tokens. */
  maxTokens: number;
}

/** One item of the span, rendered within a per-item bound. */
type Item = (bound: number) => string;

const SPOOL_REFERENCE = /"id":"spool:(\d+)"/;

/** Every item of the span in order: texts, tool calls and tool results, one item each. */
function spanItems(span: StoredMessage[]): Item[] {
  const items: Item[] = [];
  for (const message of span) {
    for (const part of message.content) {
      if (part.type === 'text') {
        if (part.text.trim() === '') continue;
        const who = message.role === 'user' ? 'User' : 'Assistant';
        items.push((bound) => `### ${who}\n${excerpt(part.text, { maxChars: bound })}`);
      } else if (part.type === 'tool-call') {
        items.push((bound) => {
          const kept = Math.floor(bound * SUMMARIZER_ARGS_STRING_SHARE);
          const digest = argsDigest(part.input, { longString: kept, keptString: kept, maxChars: bound });
          return `### Tool call ${part.toolName} [${oneLine(part.toolCallId)}]\nargs=${digest}`;
        });
      } else if (part.type === 'image') {
        // The summarizer is not sent images: it reads that there was one.
        items.push(() => `### User\n[image ${oneLine(part.name)}, ${part.mediaType}]`);
      } else {
        const { type, value } = part.output;
        const spool = SPOOL_REFERENCE.exec(value);
        const status = `${type === 'text' ? 'ok' : 'error'}${spool ? `, spool:${spool[1]}` : ''}`;
        items.push((bound) => {
          const body = excerpt(value, { maxChars: bound, keepErrors: true });
          return `### Tool result ${part.toolName} [${oneLine(part.toolCallId)}] (${status})\n${body}`;
        });
      }
    }
  }
  return items;
}

/**
 * `text` excerpted so that its token estimate is at most `maxTokens`. Characters per token vary
 * four-fold (prose against JSON or logs), so the character bound is a guess, narrowed until the
 * estimate fits; it always ends, since the bound drops by at least one character each round.
 */
function excerptWithinTokens(text: string, maxTokens: number, keepErrors: boolean): string {
  let maxChars = maxTokens * CHARS_PER_TOKEN;
  for (;;) {
    const shown = excerpt(text, { maxChars, keepErrors });
    const tokens = estimateTokens(shown);
    if (tokens <= maxTokens || maxChars === 0) return shown;
    maxChars = Math.max(Math.floor((maxChars * maxTokens) / tokens), Math.min(maxTokens, maxChars - 1));
  }
}

/** The longest start of `text` (clipped with `…`) whose estimate is at most `maxTokens`. */
function clipToTokens(text: string, maxTokens: number): string {
  if (estimateTokens(text) <= maxTokens) return text;
  let fitting = 0;
  let tooLong = text.length;
  while (tooLong - fitting > 1) {
    const middle = Math.floor((fitting + tooLong) / 2);
    if (estimateTokens(clipText(text, middle)) <= maxTokens) fitting = middle;
    else tooLong = middle;
  }
  return clipText(text, fitting);
}

/** The parts before the transcript: objective, focus and earlier summary, each within its share. */
function preamble(options: SummarizerInputOptions, maxTokens: number): string[] {
  const objectiveTokens = Math.min(
    SUMMARIZER_OBJECTIVE_TOKENS,
    Math.floor(maxTokens * SUMMARIZER_OBJECTIVE_SHARE),
  );
  const blocks = [`# Objective\n${excerptWithinTokens(options.objective, objectiveTokens, false)}`];
  const focus = options.focus?.trim();
  if (focus) {
    const shown = clipText(oneLine(focus), SUMMARIZER_FOCUS_CHARS);
    blocks.push(`# Focus\nThe user asked this summary to focus on: ${shown}. Cover it in more detail.`);
  }
  const previous = options.previousSummary?.trim();
  if (previous) blocks.push(`# Earlier summary to merge\n${previousSummaryShown(previous, maxTokens).text}`);
  return blocks;
}

/**
 * The earlier summary as the summarizer sees it: whole when it fits its share of the request, else an
 * excerpt. `whole` false means the summarizer could not merge all of it, so the caller must carry the
 * rest itself (summary-carry.ts): no fact an earlier summary held may disappear.
 */
export function previousSummaryShown(previous: string, maxTokens: number): { text: string; whole: boolean } {
  const trimmed = previous.trim();
  const budget = Math.floor(Math.max(0, Math.floor(maxTokens)) * SUMMARIZER_PREVIOUS_SHARE);
  if (estimateTokens(trimmed) <= budget) return { text: trimmed, whole: true };
  return { text: excerptWithinTokens(trimmed, budget, true), whole: false };
}

const TRAILER = `# Task\nWrite the summary now, with exactly the sections ${SUMMARY_SECTIONS.map((s) => `## ${s}`).join(', ')}.`;

function droppedNote(dropped: number, total: number): string {
  return `[The oldest ${dropped} of ${total} items of this span were left out to fit the summarizer's window.]`;
}

function assemble(head: string[], rendered: string[], dropped: number, total: number): string {
  const transcript = [`# Transcript to summarize (${total} items)`];
  if (dropped > 0) transcript.push(droppedNote(dropped, total));
  transcript.push(...rendered.slice(dropped));
  return [...head, transcript.join('\n\n'), TRAILER].join('\n\n');
}

/** The `\n\n` between blocks: one line-break run, one token. */
const SEPARATOR_TOKENS = 1;

/**
 * The summarizer's request text for a span. Per-item bounds shrink step by step until the text
 * fits `maxTokens` (core/tokens.ts estimate); if it still does not fit at the smallest bound, the
 * oldest items are left out (the text says how many). Should even the fixed parts not fit, the
 * text is clipped to the bound.
 */
export function buildSummarizerInput(options: SummarizerInputOptions): string {
  const maxTokens = Math.max(0, Math.floor(options.maxTokens));
  const fits = (text: string) => estimateTokens(text) <= maxTokens;
  const head = preamble(options, maxTokens);
  const items = spanItems(options.span);

  let rendered: string[] = [];
  for (const bound of SUMMARIZER_ITEM_BOUNDS) {
    rendered = items.map((item) => item(bound));
    const text = assemble(head, rendered, 0, items.length);
    if (fits(text)) return text;
  }

  // Estimates per item, so that finding how many to drop stays linear in the span. Joining can
  // shift an estimate by a token or so, hence the check on the assembled text after.
  const itemTokens = rendered.map((item) => estimateTokens(item) + SEPARATOR_TOKENS);
  const fixed = estimateTokens(assemble(head, [], 0, items.length));
  let remaining = itemTokens.reduce((sum, tokens) => sum + tokens, 0);
  let dropped = 0;
  while (dropped < items.length) {
    const note = estimateTokens(droppedNote(dropped, items.length)) + SEPARATOR_TOKENS;
    if (dropped > 0 && fixed + note + remaining <= maxTokens) break;
    remaining -= itemTokens[dropped];
    dropped += 1;
  }
  let text = assemble(head, rendered, dropped, items.length);
  while (!fits(text) && dropped < items.length) {
    dropped += 1;
    text = assemble(head, rendered, dropped, items.length);
  }
  return clipToTokens(text, maxTokens);
}
