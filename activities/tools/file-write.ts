/**
 * The `file-write` tool: creates or overwrites a whole file, creating missing parent directories.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { describeFsError, displayPath, resolveToolPath } from './paths';
import type { ToolContext, ToolDefinition, ToolOutcome } from './types';

export const fileWriteArgs = z.object({
  path: z.string().min(1).describe('File to write: relative to the workspace, or absolute.'),
  content: z.string().describe('The complete new content of the file (UTF-8).'),
});

/** Arguments of the file-write tool. */
export type FileWriteArgs = z.infer<typeof fileWriteArgs>;

async function runFileWrite(args: FileWriteArgs, context: ToolContext): Promise<ToolOutcome> {
  const file = resolveToolPath(context.workspace, args.path);
  const shown = displayPath(context.workspace, file);
  try {
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, args.content, 'utf8');
  } catch (error) {
    // At most empty parent directories were created: not progress worth counting.
    return {
      ok: false,
      output: `file-write failed: ${describeFsError(error, shown)}`,
      changedWorkspace: false,
    };
  }
  const bytes = Buffer.byteLength(args.content, 'utf8');
  return { ok: true, output: `wrote ${bytes} bytes to ${shown}`, changedWorkspace: true };
}

/** The `file-write` tool. */
export const fileWriteTool: ToolDefinition<FileWriteArgs> = {
  name: 'file-write',
  description: [
    'Writes content to a file, replacing the whole file if it exists and creating missing parent directories.',
    'Use it for new files or complete rewrites; for changes to part of an existing file prefer file-edit.',
  ].join(' '),
  schema: fileWriteArgs,
  summarize: (args) => `file-write: ${args.path}`,
  run: runFileWrite,
};
