/**
 * What the model step returns to the workflow for a stored answer: its ledger entry, usage, a text
 * preview, and its tool calls as references with a one-line summary and routing facts. Only workflow
 * tools' arguments travel (validated here, at the activity boundary); other arguments stay in the store.
 */

import { isMcpToolName, mcpCallSummary } from '../core/extensions/mcp-names';
import type { WorkspaceContextData } from '../core/extensions/workspace-context';
import { missingPartsError } from '../core/finish';
import { ledgerEntryFor } from '../core/ledger-entry';
import {
  type MessageMeta,
  type ToolCallPart,
  type TranscriptEntry,
  textOf,
  toolCallsOf,
} from '../core/messages';
import { TOOL, WORKFLOW_HANDLED_TOOL_NAMES } from '../core/tool-names';
import { clipChars } from '../core/truncate';
import type { RequestUsage } from '../core/usage';
import { workflowToolArgsFor } from '../core/workflow-tool-args';
import { mcpRouting } from './extensions/mcp-model-view';
import { checkFinishResult } from './output-schema';
import { findTool } from './tool-catalog';
import { routingOf } from './tools/routing';
import type { ModelStepResult } from './types';

/** Longest one-line summary of a tool call. */
const SUMMARY_MAX_CHARS = 120;

/** One line for a tool call, e.g. `bash: npm test` or `mcp github: create_issue`; unknown tools are named as such. */
export function summaryOf(call: ToolCallPart, workspaceContext: WorkspaceContextData | null): string {
  if (isMcpToolName(call.toolName)) {
    const entry = workspaceContext?.mcp.tools.find((tool) => tool.name === call.toolName);
    return clipChars(
      `${mcpCallSummary(call.toolName, entry?.tool)}${entry ? '' : ' (unknown tool)'}`,
      SUMMARY_MAX_CHARS,
    );
  }
  const tool = findTool(call.toolName);
  const parsed = tool?.parse(call.input);
  const known = tool || WORKFLOW_HANDLED_TOOL_NAMES.includes(call.toolName);
  const summary = parsed?.ok
    ? tool!.summarize(parsed.args)
    : `${call.toolName}${known ? '' : ' (unknown tool)'}`;
  return clipChars(summary, SUMMARY_MAX_CHARS);
}

/** Usage of a step stored before usage was kept with its message. */
const ZERO_USAGE: RequestUsage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };

/** The step's result for a stored answer (a goal with an output schema has its finish result checked). */
export function modelStepResult(
  entry: TranscriptEntry,
  meta: MessageMeta,
  workspaceContext: WorkspaceContextData | null,
  outputSchema?: Record<string, unknown>,
  requireParts = false,
  fullTextChars?: number,
): ModelStepResult {
  const toolCalls = toolCallsOf(entry.message).map((call) => {
    const summary = summaryOf(call, workspaceContext);
    // Workflow tools get their arguments validated here, at the boundary, and carried to the
    // workflow parsed; any other tool's arguments stay in the store.
    const parsed = workflowToolArgsFor(call.toolName, call.input);
    const withResult =
      parsed?.tool === TOOL.finish && outputSchema
        ? { ...parsed, parsed: checkFinishResult(parsed.parsed, call.input, outputSchema) }
        : parsed;
    // A goal with checks needs the claim to name the objective's parts (issue 27 §1).
    const args =
      withResult?.tool === TOOL.finish && requireParts
        ? { ...withResult, parsed: missingPartsError(withResult.parsed) }
        : withResult;
    const routing = routingOf(call.toolName, call.input) ?? mcpRouting(call, workspaceContext);
    return {
      toolCallId: call.toolCallId,
      toolName: call.toolName,
      ...(args ? { args } : {}),
      summary,
      ...(routing ? { routing } : {}),
    };
  });
  const text = textOf(entry.message).trim();
  return {
    entry: ledgerEntryFor(entry.seq, entry.key, entry.message),
    toolCalls,
    usage: meta.usage ?? ZERO_USAGE,
    finishReason: meta.finishReason ?? 'unknown',
    textPreview: clipChars(text.split('\n')[0] ?? '', 120),
    ...(fullTextChars ? { text: clipChars(text, fullTextChars) } : {}),
  };
}
