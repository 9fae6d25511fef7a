/**
 * The workspace tools by name, their specs as the model sees them, and argument validation with
 * errors a model can act on.
 */
import { z } from 'zod';
import type { ToolSpec } from '../providers/types';
import { bashTool } from './bash';
import { fileEditTool } from './file-edit';
import { fileReadTool } from './file-read';
import { fileWriteTool } from './file-write';
import { globTool } from './glob';
import { grepTool } from './grep';
import { jobKillTool, jobOutputTool } from './job-tools';
import type { ToolDefinition } from './types';

/** Every tool that works on the goal's workspace, keyed by the name the model calls it by. */
// biome-ignore lint/suspicious/noExplicitAny: each tool has its own argument type; parseToolArgs checks them.
export const WORKSPACE_TOOLS: Record<string, ToolDefinition<any>> = {
  [bashTool.name]: bashTool,
  [fileReadTool.name]: fileReadTool,
  [fileWriteTool.name]: fileWriteTool,
  [fileEditTool.name]: fileEditTool,
  [globTool.name]: globTool,
  [grepTool.name]: grepTool,
  [jobOutputTool.name]: jobOutputTool,
  [jobKillTool.name]: jobKillTool,
};

/** The model-facing spec of one tool: name, description and the JSON Schema of its arguments. */
export function toolSpec(tool: ToolDefinition<unknown>): ToolSpec {
  // `$schema` is noise to the model and some providers reject unknown top-level keywords.
  const { $schema: _dialect, ...inputSchema } = z.toJSONSchema(tool.schema) as Record<string, unknown>;
  return { name: tool.name, description: tool.description, inputSchema };
}

/** Specs of the named workspace tools in the order given (all of them when `names` is omitted); unknown names throw. */
export function toolSpecsFor(names?: readonly string[]): ToolSpec[] {
  const selected = names ?? Object.keys(WORKSPACE_TOOLS);
  return selected.map((name) => {
    const tool = WORKSPACE_TOOLS[name];
    if (!tool) throw new Error(`unknown tool: ${name} (known: ${Object.keys(WORKSPACE_TOOLS).join(', ')})`);
    return toolSpec(tool);
  });
}

/** Result of parseToolArgs. */
export type ParsedToolArgs<Args> = { ok: true; args: Args } | { ok: false; error: string };

/** zod 4 prefixes type errors with this; the field name in front says the same more usefully. */
const ZOD_MESSAGE_PREFIX = 'Invalid input: ';

/** One zod issue as `field.path: problem`. */
function formatIssue(issue: z.core.$ZodIssue): string {
  const message = issue.message.startsWith(ZOD_MESSAGE_PREFIX)
    ? issue.message.slice(ZOD_MESSAGE_PREFIX.length)
    : issue.message;
  const field = issue.path.map(String).join('.');
  return field === '' ? message : `${field}: ${message}`;
}

/**
 * Validates a model's arguments for a tool. Accepts the parsed object or the raw JSON string; on
 * failure the message names the tool and every bad field, e.g.
 * `invalid arguments for bash: command: expected string, received undefined`.
 */
export function parseToolArgs<Args>(tool: ToolDefinition<Args>, rawInput: unknown): ParsedToolArgs<Args> {
  const prefix = `invalid arguments for ${tool.name}`;
  let input = rawInput;
  if (typeof rawInput === 'string') {
    // Some providers send an empty string for a call without arguments.
    if (rawInput.trim() === '') {
      input = {};
    } else {
      try {
        input = JSON.parse(rawInput);
      } catch (error) {
        return { ok: false, error: `${prefix}: not valid JSON (${(error as Error).message})` };
      }
    }
  } else if (rawInput === undefined) {
    input = {};
  }
  const result = tool.schema.safeParse(input);
  if (result.success) return { ok: true, args: result.data };
  return { ok: false, error: `${prefix}: ${result.error.issues.map(formatIssue).join('; ')}` };
}
