/**
 * Stage 1 of compaction (spec S-COMPACT): the short stub that replaces an old tool output, and the
 * elision of very large strings in old tool-call arguments. Pure and deterministic, so a replayed
 * compaction rewrites the history to exactly the same text.
 */
import type { ToolResultPart } from '../messages';
import { charCount, clipText, ELLIPSIS, excerpt } from './text-excerpt';
import {
  DIGEST_KEPT_STRING_CHARS,
  DIGEST_LONG_STRING_CHARS,
  DIGEST_MAX_CHARS,
  DIGEST_MAX_DEPTH,
  STUB_EDGE_LINE_CHARS,
  STUB_EXCERPT_HEAD_LINES,
  STUB_EXCERPT_LINE_CHARS,
  STUB_EXCERPT_MAX_CHARS,
  STUB_EXCERPT_TAIL_LINES,
} from './text-limits';

/** How every stub starts; also how an already stubbed output is recognised. */
export const STUB_PREFIX = '[output elided: ';

/** The footer of core/truncate.ts: a stored output that ends with it is only the head of the real one. */
const TRUNCATION_FOOTER =
  /\n\[truncated: \d+ of (\d+) lines omitted; use tool-output \{"id":"spool:(\d+)","offset":\d+\} to read more\]$/;

/** Input of {@link renderStub}. */
export interface StubInput {
  toolName: string;
  /** The tool call's arguments (parsed JSON, or the raw string). */
  args: unknown;
  /** The output: the full one when the caller has it, else the stored (possibly truncated) one. */
  output: string;
  ok: boolean;
  /** The spool copy of the full output, when there is one. */
  spoolId?: number;
  /** Size of the full output when `output` is only its head (e.g. read from the ledger). */
  totalChars?: number;
  totalLines?: number;
  /** The full output's first and last non-empty lines, when `output` is only its head. */
  firstLine?: string;
  lastLine?: string;
}

/** Options of {@link argsDigest}. */
export interface DigestOptions {
  /** A string longer than this (UTF-16 units) is clipped. */
  longString?: number;
  /** How much of a clipped string is kept. */
  keptString?: number;
  /** Cap on the whole digest. */
  maxChars?: number;
}

/** Whether a tool output is already a stub (stubbing twice would lose the real size and edges). */
export function isStub(output: string): boolean {
  return output.startsWith(STUB_PREFIX);
}

function digestValue(value: unknown, depth: number, longString: number, keptString: number): unknown {
  if (typeof value === 'string') {
    if (value.length <= longString) return value;
    return `${clipText(value, keptString + ELLIPSIS.length)}(${charCount(value)} chars)`;
  }
  if (typeof value === 'bigint') return value.toString();
  if (value === null || typeof value !== 'object') return value;
  if (depth >= DIGEST_MAX_DEPTH) return ELLIPSIS;
  if (Array.isArray(value)) return value.map((item) => digestValue(item, depth + 1, longString, keptString));
  // fromEntries defines own properties, so a `__proto__` key from parsed JSON stays a plain key.
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [key, digestValue(item, depth + 1, longString, keptString)]),
  );
}

/**
 * Compact JSON of tool-call arguments with long strings clipped to their start plus `…(N chars)`,
 * the whole capped: enough to tell which call it was, never the file a file-write carried.
 */
export function argsDigest(args: unknown, options: DigestOptions = {}): string {
  const longString = options.longString ?? DIGEST_LONG_STRING_CHARS;
  const keptString = Math.min(options.keptString ?? DIGEST_KEPT_STRING_CHARS, longString);
  const json = JSON.stringify(digestValue(args, 0, longString, keptString)) ?? 'null';
  return clipText(json, options.maxChars ?? DIGEST_MAX_CHARS);
}

/** Lines of a text as an editor counts them: a trailing newline does not start another line. */
function lineCount(text: string): number {
  if (text === '') return 0;
  let newlines = 0;
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) newlines += 1;
  return text.endsWith('\n') ? newlines : newlines + 1;
}

/** First and last non-empty lines, clipped and JSON-quoted so that quotes and control characters stay inert. */
function quotedEdges(text: string): { head: string; tail: string } {
  const lines = text.split('\n').filter((line) => line.trim() !== '');
  const quote = (line: string | undefined) =>
    JSON.stringify(clipText((line ?? '').trimEnd(), STUB_EDGE_LINE_CHARS));
  return { head: quote(lines[0]), tail: quote(lines[lines.length - 1]) };
}

/**
 * The stub that replaces an old tool output, in the spec's format:
 * `[output elided: 48210 chars, spool:7 — re-read with tool-output {"id":"spool:7"}] bash args={…} — 1204 lines, status error, head: "…", tail: "…"`.
 * Without a spool copy it says `no spool copy` and carries a bounded head/tail excerpt instead, so
 * the gist survives. When `output` is a stored head ending in the truncation footer, the footer
 * gives the line count and the spool id, and the size reads `N+ chars` unless `totalChars` is given.
 */
export function renderStub(input: StubInput): string {
  const footer = TRUNCATION_FOOTER.exec(input.output);
  const body = footer ? input.output.slice(0, footer.index) : input.output;
  const spoolId = input.spoolId ?? (footer ? Number(footer[2]) : undefined);
  const lines = input.totalLines ?? (footer ? Number(footer[1]) : lineCount(body));
  const chars =
    input.totalChars !== undefined ? `${input.totalChars}` : `${charCount(body)}${footer ? '+' : ''}`;
  const where =
    spoolId === undefined
      ? 'no spool copy'
      : `spool:${spoolId} — re-read with tool-output {"id":"spool:${spoolId}"}`;
  const described =
    `${STUB_PREFIX}${chars} chars, ${where}] ${input.toolName} args=${argsDigest(input.args)}` +
    ` — ${lines} ${lines === 1 ? 'line' : 'lines'}, status ${input.ok ? 'ok' : 'error'}`;
  if (spoolId !== undefined) {
    const edges = quotedEdges(body);
    const quote = (line: string) => JSON.stringify(clipText(line.trimEnd(), STUB_EDGE_LINE_CHARS));
    const head = input.firstLine !== undefined ? quote(input.firstLine) : edges.head;
    const tail = input.lastLine !== undefined ? quote(input.lastLine) : edges.tail;
    return `${described}, head: ${head}, tail: ${tail}`;
  }
  const gist = excerpt(body, {
    maxChars: STUB_EXCERPT_MAX_CHARS,
    maxLineChars: STUB_EXCERPT_LINE_CHARS,
    headLines: STUB_EXCERPT_HEAD_LINES,
    tailLines: STUB_EXCERPT_TAIL_LINES,
    keepErrors: !input.ok,
  });
  return `${described}, excerpt:\n${gist}`;
}

/** What {@link renderStubbedToolResult} needs beyond the result itself: the call's args and the spool id. */
export interface StubContext {
  args: unknown;
  spoolId?: number;
  totalChars?: number;
  totalLines?: number;
  firstLine?: string;
  lastLine?: string;
}

/**
 * A new tool-result part whose output is the stub of `part`'s output; the ids, tool name and
 * text/error-text type are kept, so call/result pairing and the status survive. An output that
 * is already a stub is returned as it is.
 */
export function renderStubbedToolResult(part: ToolResultPart, context: StubContext): ToolResultPart {
  const { type, value } = part.output;
  if (isStub(value)) return { ...part, output: { type, value } };
  const stub = renderStub({
    toolName: part.toolName,
    args: context.args,
    output: value,
    ok: type === 'text',
    spoolId: context.spoolId,
    totalChars: context.totalChars,
    totalLines: context.totalLines,
    firstLine: context.firstLine,
    lastLine: context.lastLine,
  });
  return { ...part, output: { type, value: stub } };
}

/** What replaces a very large string in an old tool call's arguments. */
export function elidedArgText(chars: number): string {
  return `[elided: ${chars} chars; the full call is in the transcript]`;
}

/**
 * A copy of tool-call arguments in which every string (at any depth) of more than `minChars`
 * characters is replaced by {@link elidedArgText}: an old file-write must not keep a whole file
 * in the context. The input is not modified.
 */
export function elideLargeArgs(input: unknown, minChars: number): unknown {
  if (typeof input === 'string') {
    const chars = charCount(input);
    return chars > minChars ? elidedArgText(chars) : input;
  }
  if (Array.isArray(input)) return input.map((item) => elideLargeArgs(item, minChars));
  if (input === null || typeof input !== 'object') return input;
  return Object.fromEntries(
    Object.entries(input).map(([key, item]) => [key, elideLargeArgs(item, minChars)]),
  );
}
