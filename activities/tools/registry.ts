/**
 * The workspace tools by name, and argument validation with errors a model can act on. The specs
 * the model is shown come from tool-catalog.ts (toolSpecsFor).
 */
import type { z } from 'zod';
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
