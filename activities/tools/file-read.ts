/**
 * The `file-read` tool: a window of a text file's lines, numbered like `cat -n`. The file is
 * streamed and reading stops soon after the window, so the top of a huge log costs the window,
 * not the file. Only files inside the workspace (or a writable root) are read.
 */
import { z } from 'zod';
import {
  FILE_READ_COUNT_AHEAD_BYTES,
  FILE_READ_DEFAULT_LIMIT,
  FILE_READ_MAX_LINE_CHARS,
} from '../../core/limits';
import { clipHead } from '../../core/text';
import { TOOL } from '../../core/tool-names';
import { describeFsError } from './paths';
import type { ToolContext, ToolDefinition, ToolOutcome } from './types';
import { openForRead } from './workspace-boundary';

const NEWLINE = 0x0a;
const NUL = 0x00;
/** Width of the line-number column, as `cat -n` prints it. */
const LINE_NUMBER_WIDTH = 6;
/** UTF-8 needs at most this many bytes per character; bounds the bytes kept for a clipped line. */
const MAX_UTF8_BYTES_PER_CHAR = 4;

export const fileReadArgs = z.object({
  path: z.string().min(1).describe('File to read: relative to the workspace, or absolute inside it.'),
  offset: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe('1-based number of the first line to return (default 1).'),
  limit: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe(`How many lines to return (default ${FILE_READ_DEFAULT_LIMIT}).`),
});

/** Arguments of the file-read tool. */
export type FileReadArgs = z.infer<typeof fileReadArgs>;

type LineWindow =
  | { binary: true }
  | {
      binary: false;
      lines: string[];
      /** Lines in the file when known (the count-ahead reached the end), else the last line counted. */
      totalLines: number;
      /** True when the file ends within what was read; false when it goes on past `totalLines`. */
      complete: boolean;
    };

/** Bytes at the start of a file in which a NUL makes it binary (as git and grep decide). */
const BINARY_SNIFF_BYTES = 8_000;
/** How often a long read reports liveness. */
const READ_HEARTBEAT_INTERVAL_MS = 1_000;

/** How to read a window. */
interface WindowOptions {
  signal?: AbortSignal;
  heartbeat?: (details: unknown) => void;
  /** After the window, lines are counted for at most this many bytes (default FILE_READ_COUNT_AHEAD_BYTES). */
  countAheadBytes?: number;
}

/**
 * Reads lines [first, first + count) of a file, streaming: it stops once the window is read and
 * lines are counted a bounded distance further, so a window at the top of a 2 GB file costs the
 * window. A NUL in the first bytes or inside a returned line makes the file binary.
 */
export async function readLineWindow(
  stream: AsyncIterable<Buffer> & { destroy(): void },
  first: number,
  count: number,
  options: WindowOptions = {},
): Promise<LineWindow> {
  const last = first + count - 1;
  const maxLineBytes = FILE_READ_MAX_LINE_CHARS * MAX_UTF8_BYTES_PER_CHAR;
  const countAhead = options.countAheadBytes ?? FILE_READ_COUNT_AHEAD_BYTES;
  const lines: string[] = [];
  let lineNumber = 1;
  let parts: Buffer[] = [];
  let keptBytes = 0;
  let clipped = false;
  let unterminated = false;
  let bytesRead = 0;
  let windowEndByte = -1;
  let lastBeat = Date.now();

  const finishLine = () => {
    const line = Buffer.concat(parts);
    lines.push(decodeLine(line, clipped));
    parts = [];
    keptBytes = 0;
    clipped = false;
    return line.includes(NUL);
  };

  try {
    for await (const chunk of stream) {
      options.signal?.throwIfAborted();
      if (options.heartbeat && Date.now() - lastBeat >= READ_HEARTBEAT_INTERVAL_MS) {
        lastBeat = Date.now();
        options.heartbeat({ bytesRead, lines: lineNumber });
      }
      if (bytesRead < BINARY_SNIFF_BYTES && chunk.subarray(0, BINARY_SNIFF_BYTES - bytesRead).includes(NUL)) {
        return { binary: true };
      }
      const chunkStart = bytesRead;
      bytesRead += chunk.length;
      let start = 0;
      for (;;) {
        const newline = chunk.indexOf(NEWLINE, start);
        const end = newline === -1 ? chunk.length : newline;
        const inWindow = lineNumber >= first && lineNumber <= last;
        if (inWindow && end > start) {
          const take = Math.min(end - start, maxLineBytes - keptBytes);
          if (take > 0) parts.push(Buffer.from(chunk.subarray(start, start + take)));
          keptBytes += take;
          if (take < end - start) clipped = true;
        }
        if (newline === -1) {
          unterminated = unterminated || end > start;
          break;
        }
        if (inWindow && finishLine()) return { binary: true };
        if (lineNumber === last) windowEndByte = chunkStart + newline;
        lineNumber += 1;
        unterminated = false;
        start = newline + 1;
        if (windowEndByte >= 0 && chunkStart + start - windowEndByte > countAhead) {
          // Far enough past the window: the file goes on; say so instead of counting on.
          return { binary: false, lines, totalLines: lineNumber - 1, complete: false };
        }
      }
      if (windowEndByte >= 0 && bytesRead - windowEndByte > countAhead) {
        return { binary: false, lines, totalLines: lineNumber - 1, complete: false };
      }
    }
  } finally {
    stream.destroy();
  }
  if (unterminated && lineNumber >= first && lineNumber <= last && finishLine()) return { binary: true };
  return { binary: false, lines, totalLines: unterminated ? lineNumber : lineNumber - 1, complete: true };
}

function decodeLine(bytes: Buffer, clippedBytes: boolean): string {
  let text = bytes.toString('utf8');
  if (!clippedBytes && text.endsWith('\r')) text = text.slice(0, -1);
  if (clippedBytes || text.length > FILE_READ_MAX_LINE_CHARS) {
    return `${clipHead(text, FILE_READ_MAX_LINE_CHARS)}… [line clipped at ${FILE_READ_MAX_LINE_CHARS} characters]`;
  }
  return text;
}

/** Numbers lines like `cat -n`: the number right-aligned in six columns, a tab, the text. */
export function numberLines(lines: string[], firstNumber: number): string {
  return lines
    .map((line, index) => `${String(firstNumber + index).padStart(LINE_NUMBER_WIDTH)}\t${line}`)
    .join('\n');
}

async function runFileRead(args: FileReadArgs, context: ToolContext): Promise<ToolOutcome> {
  const first = args.offset ?? 1;
  const limit = args.limit ?? FILE_READ_DEFAULT_LIMIT;
  const fail = (output: string): ToolOutcome => ({ ok: false, output, changedWorkspace: false });

  const opened = await openForRead(context, args.path);
  if (!opened.ok) return fail(opened.error);
  const { shown } = opened;
  let window: LineWindow;
  try {
    window = await readLineWindow(opened.handle.createReadStream({ autoClose: false }), first, limit, {
      signal: context.signal,
      heartbeat: context.heartbeat,
    });
  } catch (error) {
    if (context.signal.aborted) throw error;
    return fail(describeFsError(error, shown));
  } finally {
    await opened.handle.close();
  }
  if (window.binary) {
    return fail(`${shown} is a binary file (it contains NUL bytes); file-read only shows text files`);
  }
  const { lines, totalLines, complete } = window;
  if (totalLines === 0) return { ok: true, output: `[${shown} is empty]`, changedWorkspace: false };
  if (lines.length === 0) {
    return fail(`offset ${first} is past the end of ${shown}, which has ${totalLines} lines`);
  }
  const lastShown = first + lines.length - 1;
  let output = numberLines(lines, first);
  if (!complete) {
    output += `\n[lines ${first}-${lastShown} of more than ${totalLines}; use offset=${lastShown + 1} to read more]`;
  } else if (lastShown < totalLines) {
    output += `\n[lines ${first}-${lastShown} of ${totalLines}; use offset=${lastShown + 1} to read more]`;
  }
  return { ok: true, output, changedWorkspace: false };
}

/** The `file-read` tool. */
export const fileReadTool: ToolDefinition<FileReadArgs> = {
  name: TOOL.fileRead,
  description: [
    'Reads a text file and returns its lines numbered like `cat -n` (number, tab, text).',
    `Returns at most limit lines (default ${FILE_READ_DEFAULT_LIMIT}) starting at the 1-based line offset;`,
    'when more lines remain, a final note says which offset to read next.',
    `Lines longer than ${FILE_READ_MAX_LINE_CHARS} characters are clipped. Binary files are refused.`,
    'The line numbers and tab are not part of the file: leave them out of file-edit strings.',
  ].join(' '),
  schema: fileReadArgs,
  summarize: (args) => `file-read: ${args.path}${args.offset ? ` (from line ${args.offset})` : ''}`,
  run: runFileRead,
};
