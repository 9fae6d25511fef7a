/** Every tool that runs as an activity, with argument parsing and the specs the model is shown. */
import { agentToolSpec } from '../core/agent-args';
import { finishToolSpec } from '../core/finish';
import { modelJsonSchema } from '../core/model-json-schema';
import { todoWriteToolSpec } from '../core/todo-write-schema';
import { LEGACY_TOOL } from '../core/tool-names';
import type { ToolSpec } from './providers/types';
import { jobOutputTool } from './tools/job-tools';
import { memorySearchTool } from './tools/memory-search';
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
  [memorySearchTool.name]: memorySearchTool,
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

/** The tools the workflow handles itself, as the model is shown them. */
const WORKFLOW_TOOL_SPECS: ToolSpec[] = [finishToolSpec(), todoWriteToolSpec(), agentToolSpec()];

/** Specs already built: a schema's JSON form does not change while the process runs. */
const specCache = new Map<string, ToolSpec>();

function specOf(name: string): ToolSpec | undefined {
  const cached = specCache.get(name);
  if (cached) return cached;
  const tool = ACTIVITY_TOOLS[name];
  const spec = tool
    ? { name, description: tool.description, inputSchema: modelJsonSchema(tool.schema) }
    : WORKFLOW_TOOL_SPECS.find((workflowTool) => workflowTool.name === name);
  if (spec) specCache.set(name, spec);
  return spec;
}

/**
 * The specs the model is offered for these tool names, in the order given: activity tools from the
 * catalog, todo-write and finish from core. An unknown name throws: offering a tool that does not
 * exist, or silently dropping one the workflow asked for, would be a bug.
 */
export function toolSpecsFor(names: readonly string[]): ToolSpec[] {
  return names.map((name) => {
    const spec = specOf(name);
    if (!spec) {
      const known = [...Object.keys(ACTIVITY_TOOLS), ...WORKFLOW_TOOL_SPECS.map((tool) => tool.name)];
      throw new Error(`unknown tool: ${name} (known: ${known.join(', ')})`);
    }
    return spec;
  });
}
