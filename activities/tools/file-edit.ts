/**
 * The `file-edit` tool: exact string replacement in an existing file. It refuses ambiguous edits
 * rather than guess which occurrence the model meant.
 */
import type { FileHandle } from 'node:fs/promises';
import { z } from 'zod';
import { TOOL } from '../../core/tool-names';
import { describeFsError } from './paths';
import { openForWrite, replaceContent } from './safe-write';
import type { ToolContext, ToolDefinition, ToolOutcome } from './types';

export const fileEditArgs = z.object({
  path: z.string().min(1).describe('File to edit: relative to the workspace, or absolute inside it.'),
  old_string: z
    .string()
    .describe(
      'Exact text to replace, including whitespace and indentation; must occur exactly once unless replace_all.',
    ),
  new_string: z.string().describe('Text to put in its place (must differ from old_string).'),
  replace_all: z
    .boolean()
    .optional()
    .describe('Replace every occurrence instead of requiring exactly one (default false).'),
});

/** Arguments of the file-edit tool. */
export type FileEditArgs = z.infer<typeof fileEditArgs>;

/** Non-overlapping occurrences of `needle` in `haystack`, as a replacement would see them. */
export function countOccurrences(haystack: string, needle: string): number {
  if (needle === '') return 0;
  let count = 0;
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + needle.length)) {
    count += 1;
  }
  return count;
}

async function runFileEdit(args: FileEditArgs, context: ToolContext): Promise<ToolOutcome> {
  const fail = (output: string): ToolOutcome => ({ ok: false, output, changedWorkspace: false });

  if (args.old_string === '') {
    return fail(
      'old_string is empty; give the exact text to replace (to create or overwrite a file, use file-write)',
    );
  }
  if (args.old_string === args.new_string) {
    return fail('old_string and new_string are identical; nothing would change');
  }
  const opened = await openForWrite(context, args.path, { create: false, toolName: TOOL.fileEdit });
  if (!opened.ok) return fail(opened.error);
  try {
    return await editOpened(args, opened.handle, opened.shown);
  } finally {
    await opened.handle.close();
  }
}

async function editOpened(args: FileEditArgs, handle: FileHandle, shown: string): Promise<ToolOutcome> {
  const fail = (output: string): ToolOutcome => ({ ok: false, output, changedWorkspace: false });
  let content: string;
  try {
    content = await handle.readFile('utf8');
  } catch (error) {
    return fail(describeFsError(error, shown));
  }
  if (content.includes('\0'))
    return fail(`${shown} is a binary file (it contains NUL bytes); file-edit only edits text`);

  const occurrences = countOccurrences(content, args.old_string);
  if (occurrences === 0) {
    return fail(
      `old_string not found in ${shown}; it must match the file exactly, including whitespace and indentation ` +
        '(read the file again with file-read, and leave out the line-number prefixes)',
    );
  }
  if (occurrences > 1 && !args.replace_all) {
    return fail(
      `old_string occurs ${occurrences} times in ${shown}; include more surrounding text to make it unique, ` +
        'or set replace_all to true to replace every occurrence',
    );
  }
  // split/join and slicing, not String.replace: `$&` and friends in new_string must stay literal.
  const updated = args.replace_all
    ? content.split(args.old_string).join(args.new_string)
    : replaceFirst(content, args.old_string, args.new_string);
  try {
    await replaceContent(handle, updated);
  } catch (error) {
    return fail(`file-edit failed: ${describeFsError(error, shown)}`);
  }
  const noun = occurrences === 1 ? 'occurrence' : 'occurrences';
  return { ok: true, output: `replaced ${occurrences} ${noun} in ${shown}`, changedWorkspace: true };
}

function replaceFirst(content: string, oldString: string, newString: string): string {
  const at = content.indexOf(oldString);
  return content.slice(0, at) + newString + content.slice(at + oldString.length);
}

/** The `file-edit` tool. */
export const fileEditTool: ToolDefinition<FileEditArgs> = {
  name: TOOL.fileEdit,
  description: [
    'Replaces exact text in an existing file: old_string must match the file character for character',
    '(whitespace and indentation included) and occur exactly once, unless replace_all is true.',
    'Fails without changing anything when old_string is empty, missing, ambiguous, or equal to new_string.',
    'Read the file with file-read first; do not copy its line-number prefixes into old_string.',
  ].join(' '),
  schema: fileEditArgs,
  summarize: (args) => `file-edit: ${args.path}${args.replace_all ? ' (all)' : ''}`,
  run: runFileEdit,
};
