import { z } from 'zod';
import { TOOL_OUTPUT_DEFAULT_LIMIT, TOOL_OUTPUT_MAX_LIMIT } from '../../core/limits';
import { TOOL } from '../../core/tool-names';
import type { ToolDefinition } from './types';

const toolOutputArgs = z.object({
  id: z
    .union([z.string().regex(/^spool:\d+$/, 'expected an id like "spool:7"'), z.number().int().positive()])
    .describe('The spool id from a truncation footer or a stub, e.g. "spool:7".'),
  offset: z.number().int().min(0).optional().describe('Byte offset to start reading at (default 0).'),
  limit: z
    .number()
    .int()
    .positive()
    .max(TOOL_OUTPUT_MAX_LIMIT)
    .optional()
    .describe(`Bytes to read (default ${TOOL_OUTPUT_DEFAULT_LIMIT}, at most ${TOOL_OUTPUT_MAX_LIMIT}).`),
});

type ToolOutputArgs = z.infer<typeof toolOutputArgs>;

/** The spool number of a tool-output id. */
function spoolNumber(id: string | number): number {
  return typeof id === 'number' ? id : Number(id.slice('spool:'.length));
}

/** `tool-output`: pages through a spooled tool result, byte-exact (spec S-SPOOL). */
export const toolOutputTool: ToolDefinition<ToolOutputArgs> = {
  name: TOOL.toolOutput,
  description:
    'Read a tool result that was too large to show in full. Pass the id from the "[truncated: ...]" footer or an "[output elided: ...]" stub ("spool:N"), and the offset it names; returns that slice with the total size and next_offset to continue from.',
  schema: toolOutputArgs,
  summarize: (args) => `tool-output: ${typeof args.id === 'number' ? `spool:${args.id}` : args.id}`,
  async run(args, context) {
    const spoolId = spoolNumber(args.id);
    const page = await context.store.readSpool(
      context.sessionId,
      spoolId,
      args.offset ?? 0,
      args.limit ?? TOOL_OUTPUT_DEFAULT_LIMIT,
    );
    if (!page) {
      return {
        ok: false,
        output: `no spooled output spool:${spoolId} in this session`,
        changedWorkspace: false,
      };
    }
    const more =
      page.nextOffset === null ? '(end of output)' : `next_offset=${page.nextOffset} (more available)`;
    return {
      ok: true,
      output: `output=spool:${spoolId} size=${page.size} offset=${page.offset} ${more}\n${page.content}`,
      changedWorkspace: false,
    };
  },
};
