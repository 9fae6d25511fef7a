/**
 * The `file-read` tool: a window of a text file's lines, numbered like `cat -n`. The file is
 * streamed, so reading the top of a huge log costs the window, not the file.
 */
import { createReadStream } from 'node:fs';
import { z } from 'zod';
import { FILE_READ_DEFAULT_LIMIT, FILE_READ_MAX_LINE_CHARS } from '../../core/limits';
import { describeFsError, displayPath, resolveToolPath } from './paths';
import type { ToolContext, ToolDefinition, ToolOutcome } from './types';

const NEWLINE = 0x0a;
const NUL = 0x00;
/** Width of the line-number column, as `cat -n` prints it. */
const LINE_NUMBER_WIDTH = 6;
/** UTF-8 needs at most this many bytes per character; bounds the bytes kept for a clipped line. */
const MAX_UTF8_BYTES_PER_CHAR = 4;

export const fileReadArgs = z.object({
  path: z.string().min(1).describe('File to read: relative to the workspace, or absolute.'),
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

type LineWindow = { binary: true } | { binary: false; lines: string[]; totalLines: number };

/** Reads lines [first, first + count) of a file and counts all its lines; reports binary files instead. */
async function readLineWindow(file: string, first: number, count: number): Promise<LineWindow> {
  const last = first + count - 1;
  const maxLineBytes = FILE_READ_MAX_LINE_CHARS * MAX_UTF8_BYTES_PER_CHAR;
  const lines: string[] = [];
  let lineNumber = 1;
  let parts: Buffer[] = [];
  let keptBytes = 0;
  let clipped = false;
  let unterminated = false;

  const finishLine = () => {
    lines.push(decodeLine(Buffer.concat(parts), clipped));
    parts = [];
    keptBytes = 0;
    clipped = false;
  };

  const stream = createReadStream(file);
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      if (chunk.includes(NUL)) return { binary: true };
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
        if (inWindow) finishLine();
        lineNumber += 1;
        unterminated = false;
        start = newline + 1;
      }
    }
  } finally {
    stream.destroy();
  }
  if (unterminated && lineNumber >= first && lineNumber <= last) finishLine();
  return { binary: false, lines, totalLines: unterminated ? lineNumber : lineNumber - 1 };
}

function decodeLine(bytes: Buffer, clippedBytes: boolean): string {
  let text = bytes.toString('utf8');
  if (!clippedBytes && text.endsWith('\r')) text = text.slice(0, -1);
  if (clippedBytes || text.length > FILE_READ_MAX_LINE_CHARS) {
    return `${text.slice(0, FILE_READ_MAX_LINE_CHARS)}… [line clipped at ${FILE_READ_MAX_LINE_CHARS} characters]`;
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
  const file = resolveToolPath(context.workspace, args.path);
  const shown = displayPath(context.workspace, file);
  const first = args.offset ?? 1;
  const limit = args.limit ?? FILE_READ_DEFAULT_LIMIT;
  const fail = (output: string): ToolOutcome => ({ ok: false, output, changedWorkspace: false });

  let window: LineWindow;
  try {
    window = await readLineWindow(file, first, limit);
  } catch (error) {
    return fail(describeFsError(error, shown));
  }
  if (window.binary) {
    return fail(`${shown} is a binary file (it contains NUL bytes); file-read only shows text files`);
  }
  const { lines, totalLines } = window;
  if (totalLines === 0) return { ok: true, output: `[${shown} is empty]`, changedWorkspace: false };
  if (first > totalLines) {
    return fail(`offset ${first} is past the end of ${shown}, which has ${totalLines} lines`);
  }
  const lastShown = first + lines.length - 1;
  let output = numberLines(lines, first);
  if (lastShown < totalLines) {
    output += `\n[lines ${first}-${lastShown} of ${totalLines}; use offset=${lastShown + 1} to read more]`;
  }
  return { ok: true, output, changedWorkspace: false };
}

/** The `file-read` tool. */
export const fileReadTool: ToolDefinition<FileReadArgs> = {
  name: 'file-read',
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
