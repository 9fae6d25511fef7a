/**
 * The `file-write` tool: creates or overwrites a whole file, creating missing parent directories,
 * only inside the workspace (see safe-write.ts for how a symlink can never lead it outside).
 */
import { z } from 'zod';
import { TOOL } from '../../core/tool-names';
import { describeFsError } from './paths';
import { openForWrite, replaceContent } from './safe-write';
import type { ToolContext, ToolDefinition, ToolOutcome } from './types';

export const fileWriteArgs = z.object({
  path: z.string().min(1).describe('File to write: relative to the workspace, or absolute inside it.'),
  content: z.string().describe('The complete new content of the file (UTF-8).'),
});

/** Arguments of the file-write tool. */
export type FileWriteArgs = z.infer<typeof fileWriteArgs>;

async function runFileWrite(args: FileWriteArgs, context: ToolContext): Promise<ToolOutcome> {
  const opened = await openForWrite(context, args.path, { create: true, toolName: TOOL.fileWrite });
  // At most empty parent directories were created: not progress worth counting.
  if (!opened.ok) return { ok: false, output: opened.error, changedWorkspace: false };
  try {
    await replaceContent(opened.handle, args.content);
  } catch (error) {
    return {
      ok: false,
      output: `file-write failed: ${describeFsError(error, opened.shown)}`,
      changedWorkspace: true,
    };
  } finally {
    await opened.handle.close();
  }
  const bytes = Buffer.byteLength(args.content, 'utf8');
  return { ok: true, output: `wrote ${bytes} bytes to ${opened.shown}`, changedWorkspace: true };
}

/** The `file-write` tool. */
export const fileWriteTool: ToolDefinition<FileWriteArgs> = {
  name: TOOL.fileWrite,
  description: [
    'Writes content to a file, replacing the whole file if it exists and creating missing parent directories.',
    'Use it for new files or complete rewrites; for changes to part of an existing file prefer file-edit.',
    'Only files inside the workspace can be written; symlinks leading outside it are refused.',
  ].join(' '),
  schema: fileWriteArgs,
  summarize: (args) => `file-write: ${args.path}`,
  run: runFileWrite,
};
