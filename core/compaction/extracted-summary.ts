/**
 * The summary used when the summarizer fails while the run recovers from an overflowing context
 * (spec S-COMPACT): extracted from the transcript without a model — user messages, files
 * modified, recent commands and errors — in the same six sections as a model's summary. It
 * states only what the transcript shows, so Next steps is left "not stated".
 */
import { type StoredMessage, textOf } from '../messages';
import { TOOL } from '../tool-names';
import { type FilesModified, pairToolCalls, renderFilesModified, type ToolExchange } from './files-modified';
import { argsDigest } from './stub';
import { mergeSummaries } from './summary-carry';
import { SUMMARY_SECTIONS, type SummarySection } from './summary-text';
import { clipText, excerpt, oneLine } from './text-excerpt';
import {
  COMMAND_MAX_CHARS,
  EXTRACTED_ASSISTANT_NOTE_CHARS,
  EXTRACTED_ASSISTANT_NOTES,
  EXTRACTED_ERROR_CHARS,
  EXTRACTED_FAILED_CALLS,
  EXTRACTED_RECENT_COMMANDS,
  EXTRACTED_SPOOL_REFERENCES,
  EXTRACTED_USER_MESSAGE_CHARS,
  EXTRACTED_USER_MESSAGES,
  STUB_EDGE_LINE_CHARS,
} from './text-limits';

/** Input of {@link extractedSummary}. */
export interface ExtractedSummaryInput {
  objective: string;
  /** The messages being compacted, oldest first. */
  span: StoredMessage[];
  /** Derived from the tool log (filesModifiedFromToolLog). */
  filesModified: FilesModified;
  /** The earlier summary (previousSummaryBody), carried over verbatim: no model merges it here. */
  previousSummary?: string;
}

/** Says up front that no model wrote this, so the agent weighs it accordingly. */
export const EXTRACTED_NOTE =
  '(Extracted from the transcript without a model, because the summarizer failed; quotes are verbatim.)';

const SPOOL_ID = /spool:(\d+)/g;

/** Quotes text as a Markdown blockquote, every line prefixed, so it cannot open a section. */
function quote(text: string): string {
  return text
    .split('\n')
    .map((line) => `> ${line}`)
    .join('\n');
}

/** The newest `count` non-empty texts of messages with `role`, oldest of them first. */
function latestTexts(span: StoredMessage[], role: 'user' | 'assistant', count: number): string[] {
  const texts = span
    .filter((message) => message.role === role)
    .map((message) => textOf(message).trim())
    .filter((text) => text !== '');
  return texts.slice(Math.max(0, texts.length - count));
}

function goalSection(input: ExtractedSummaryInput): string {
  const lines = [quote(excerpt(input.objective.trim(), { maxChars: EXTRACTED_USER_MESSAGE_CHARS }))];
  const users = latestTexts(input.span, 'user', EXTRACTED_USER_MESSAGES);
  if (users.length > 0) {
    lines.push('', 'Latest user messages in the compacted span (newest last):');
    for (const text of users) lines.push(quote(excerpt(text, { maxChars: EXTRACTED_USER_MESSAGE_CHARS })));
  }
  return lines.join('\n');
}

function findingsSection(span: StoredMessage[]): string {
  const notes = latestTexts(span, 'assistant', EXTRACTED_ASSISTANT_NOTES);
  if (notes.length === 0) return `${EXTRACTED_NOTE}\nNo assistant text in the compacted span.`;
  const quoted = notes.map((text) => quote(excerpt(text, { maxChars: EXTRACTED_ASSISTANT_NOTE_CHARS })));
  return [EXTRACTED_NOTE, 'Latest assistant notes (newest last):', ...quoted].join('\n');
}

function lastLine(text: string): string {
  const lines = text.split('\n').filter((line) => line.trim() !== '');
  return JSON.stringify(clipText((lines[lines.length - 1] ?? '').trimEnd(), STUB_EDGE_LINE_CHARS));
}

function commandLine(exchange: ToolExchange): string {
  const input = exchange.call.input as { command?: unknown } | null;
  const command = typeof input?.command === 'string' ? input.command : argsDigest(exchange.call.input);
  const shown = `\`${clipText(oneLine(command), COMMAND_MAX_CHARS)}\``;
  const { result } = exchange;
  if (!result) return `- ${shown} → no result`;
  const status = result.output.type === 'text' ? 'ok' : 'error';
  return `- ${shown} → ${status}, last line: ${lastLine(result.output.value)}`;
}

/** A code block whose fence is longer than any backtick run inside, so the output cannot close it. */
function fenced(body: string): string {
  const longestRun = Math.max(0, ...(body.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(Math.max(3, longestRun + 1));
  return `${fence}\n${body}\n${fence}`;
}

function failedCallBlock(exchange: ToolExchange): string {
  const { call, result } = exchange;
  const output = result?.output.value ?? '';
  const body = excerpt(output, { maxChars: EXTRACTED_ERROR_CHARS, keepErrors: true });
  return `- ${call.toolName} args=${argsDigest(call.input)}\n${fenced(body)}`;
}

function stateSection(exchanges: ToolExchange[]): string {
  const commands = exchanges.filter((exchange) => exchange.call.toolName === TOOL.bash);
  const recent = commands.slice(Math.max(0, commands.length - EXTRACTED_RECENT_COMMANDS));
  const failed = exchanges.filter((exchange) => exchange.result?.output.type === 'error-text');
  const lastFailed = failed.slice(Math.max(0, failed.length - EXTRACTED_FAILED_CALLS));
  const lines: string[] = [];
  if (recent.length === 0) lines.push('No commands were run in the compacted span.');
  else lines.push('Recent commands (newest last):', ...recent.map(commandLine));
  lines.push('');
  if (lastFailed.length === 0) lines.push('No tool call failed in the compacted span.');
  else lines.push('Errors of the last failed calls (newest last):', ...lastFailed.map(failedCallBlock));
  return lines.join('\n');
}

function referencesSection(span: StoredMessage[]): string {
  const ids: string[] = [];
  for (const message of span) {
    if (message.role !== 'tool') continue;
    for (const part of message.content) {
      for (const match of part.output.value.matchAll(SPOOL_ID)) {
        const reference = `spool:${match[1]} (${part.toolName})`;
        const known = ids.indexOf(reference);
        if (known !== -1) ids.splice(known, 1);
        ids.push(reference);
      }
    }
  }
  if (ids.length === 0) return '(none)';
  return ids
    .slice(Math.max(0, ids.length - EXTRACTED_SPOOL_REFERENCES))
    .map((id) => `- ${id}`)
    .join('\n');
}

/**
 * The fallback summary of a span in the six-section format: the objective and latest user
 * messages, latest assistant notes, the files modified (every path), recent commands and the
 * exact error output of the last failed calls, and the spool ids seen, merged with the earlier summary
 * when there is one. Deterministic; every part is bounded except the list of paths, which is never cut,
 * and the earlier summary, which is carried whole.
 */
export function extractedSummary(input: ExtractedSummaryInput): string {
  const exchanges = pairToolCalls(input.span);
  const bodies: Record<SummarySection, string> = {
    Goal: goalSection(input),
    'Decisions and findings': findingsSection(input.span),
    'Files modified': renderFilesModified(input.filesModified),
    'Current state': stateSection(exchanges),
    'Next steps':
      '(not stated: no model summarized this span; see Current state and the latest user messages)',
    References: referencesSection(input.span),
  };
  const extracted = SUMMARY_SECTIONS.map((section) => `## ${section}\n${bodies[section]}`).join('\n\n');
  return input.previousSummary ? mergeSummaries(input.previousSummary, extracted) : extracted;
}
