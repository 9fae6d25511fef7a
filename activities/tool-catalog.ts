/** Every tool that runs as an activity, with argument parsing and the specs the model is shown. */
import { z } from 'zod';
import { LEGACY_TOOL } from '../core/tool-names';
import type { ToolSpec } from './providers/types';
import { jobOutputTool } from './tools/job-tools';
import { parseToolArgs, WORKSPACE_TOOLS } from './tools/registry';
import { toolOutputTool } from './tools/tool-output';
import type { ToolContext, ToolDefinition, ToolOutcome } from './tools/types';

/** A tool ready to run: its definition plus a parser for the model's raw arguments. */
export interface CatalogTool {
  name: string;
  parse(rawInput: unknown): { ok: true; args: unknown } | { ok: false; error: string };
  summarize(args: unknown): string;
  run(args: unknown, context: ToolContext): Promise<ToolOutcome>;
}

// biome-ignore lint/suspicious/noExplicitAny: the catalog holds tools of different argument types
const ACTIVITY_TOOLS: Record<string, ToolDefinition<any>> = {
  ...WORKSPACE_TOOLS,
  [toolOutputTool.name]: toolOutputTool,
  // The retired name of job-output (spec S-JOBS): not offered, still handled.
  [LEGACY_TOOL.bashOutput]: { ...jobOutputTool, name: LEGACY_TOOL.bashOutput },
};

/** The tool of that name, or undefined for an unknown (or workflow-handled) tool. */
export function findTool(name: string): CatalogTool | undefined {
  const tool = ACTIVITY_TOOLS[name];
  if (!tool) return undefined;
  return {
    name,
    parse: (rawInput) => parseToolArgs(tool, rawInput),
    summarize: (args) => tool.summarize(args),
    run: (args, context) => tool.run(args, context),
  };
}

/** The spec the model is shown for a tool, or undefined when there is no such activity tool. */
export function toolSpecOf(name: string): ToolSpec | undefined {
  const tool = ACTIVITY_TOOLS[name];
  if (!tool) return undefined;
  return {
    name,
    description: tool.description,
    inputSchema: z.toJSONSchema(tool.schema) as Record<string, unknown>,
  };
}
