/**
 * One MCP tool call on the tool host, as the tool activity runs it: the server's connection from
 * the hub (restarted with a notice when it died), the call with progress as heartbeats and the
 * goal's cancellation as MCP's cancel notification, and the result as text: images, audio and
 * binary resources go to the spool and the text names their spool copy.
 */

import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { CancelledFailure } from '@temporalio/common';
import type { WorkspaceContextData } from '../../core/extensions/workspace-context';
import { storeKeys } from '../../core/store-keys';
import type { ToolContext, ToolOutcome } from '../tools/types';
import type { ConfiguredServer } from './extension-config';
import type { McpRunContext } from './mcp-connection';
import type { McpHub } from './mcp-hub';

/** How often a running MCP call heartbeats (cancellation reaches an activity only through its heartbeats). */
const MCP_HEARTBEAT_INTERVAL_MS = 1_000;

/** What an MCP call needs besides the tool context. */
export interface McpCallDeps {
  hub: McpHub;
  /** The goal's servers as the tool host's config names them now. */
  servers: () => ConfiguredServer[];
  run: McpRunContext;
}

/** An MCP call's outcome, with the values to redact from it (header values). */
export interface McpCallOutcome extends ToolOutcome {
  secrets: readonly string[];
}

function argsObject(raw: unknown): Record<string, unknown> | string {
  let value = raw;
  if (typeof value === 'string') {
    if (value.trim() === '') return {};
    try {
      value = JSON.parse(value);
    } catch (err) {
      return `the arguments are not valid JSON: ${(err as Error).message}`;
    }
  }
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) return 'the arguments must be a JSON object';
  return value as Record<string, unknown>;
}

/** Runs an MCP tool call named as the model saw it (`mcp__server__tool`). */
export async function runMcpToolCall(
  toolName: string,
  rawInput: unknown,
  row: WorkspaceContextData,
  context: ToolContext,
  deps: McpCallDeps,
): Promise<McpCallOutcome> {
  const fail = (output: string): McpCallOutcome => ({
    ok: false,
    output,
    changedWorkspace: false,
    secrets: [],
  });
  const entry = row.mcp.tools.find((tool) => tool.name === toolName);
  if (!entry) return fail(`unknown tool "${toolName}": no MCP server of this goal offers it`);
  const server = deps.servers().find((candidate) => candidate.name === entry.server);
  if (!server) {
    return fail(
      `MCP server "${entry.server}" is no longer configured on this tool host; its tools cannot be called`,
    );
  }
  const args = argsObject(rawInput);
  if (typeof args === 'string') return fail(`${toolName}: ${args}`);
  let connected: Awaited<ReturnType<McpHub['connect']>>;
  try {
    connected = await deps.hub.connect(server, deps.run);
  } catch (err) {
    return fail((err as Error).message);
  }
  const { connection } = connected;
  const started = Date.now();
  let lastProgress: { progress: number; total?: number } | undefined;
  const beat = () => {
    try {
      context.heartbeat({
        elapsedMs: Date.now() - started,
        ...(lastProgress ? { mcpProgress: lastProgress } : {}),
      });
    } catch {
      // A failed heartbeat must not fail the call; Temporal notices missing heartbeats by itself.
    }
  };
  // The worker is alive while it waits; a server's progress notifications are heartbeats too.
  const heartbeat = setInterval(beat, MCP_HEARTBEAT_INTERVAL_MS);
  let result: CallToolResult;
  try {
    result = await connection.callTool(entry.tool, args, {
      signal: context.signal,
      onProgress: (progress) => {
        lastProgress = progress;
        beat();
      },
    });
  } catch (err) {
    if (context.signal.aborted) throw new CancelledFailure(`${toolName} cancelled`);
    const died = !connection.alive;
    if (died) await deps.hub.drop(context.sessionId, server.name);
    const why = died
      ? `the MCP server stopped during the call (${connection.describeExit()})`
      : (err as Error).message;
    return { ...fail(`${toolName} failed: ${why}`), secrets: connection.secrets };
  } finally {
    clearInterval(heartbeat);
  }
  const text = await resultText(result, context, toolName);
  return {
    ok: result.isError !== true,
    output: connected.restarted ? `${connected.restarted}\n${text}` : text,
    // An MCP tool may change anything it reaches; counting it as progress is the safe side.
    changedWorkspace: entry.readOnly !== true,
    secrets: connection.secrets,
  };
}

/** The result's content as text: text parts as they are, binary parts as stubs naming their spool copy. */
async function resultText(result: CallToolResult, context: ToolContext, toolName: string): Promise<string> {
  const parts: string[] = [];
  for (const [index, item] of (result.content ?? []).entries()) {
    if (item.type === 'text') {
      parts.push(item.text);
    } else if (item.type === 'image' || item.type === 'audio') {
      parts.push(await spoolStub(context, toolName, index, item.type, item.mimeType, item.data));
    } else if (item.type === 'resource') {
      const resource = item.resource as { uri: string; text?: string; blob?: string; mimeType?: string };
      if (typeof resource.text === 'string') parts.push(`[resource ${resource.uri}]\n${resource.text}`);
      else if (typeof resource.blob === 'string')
        parts.push(
          await spoolStub(
            context,
            toolName,
            index,
            `resource ${resource.uri}`,
            resource.mimeType,
            resource.blob,
          ),
        );
    } else if (item.type === 'resource_link') {
      parts.push(`[resource link: ${item.uri}${item.name ? ` (${item.name})` : ''}]`);
    }
  }
  if (parts.length === 0 && result.structuredContent !== undefined)
    parts.push(JSON.stringify(result.structuredContent));
  return parts.join('\n');
}

async function spoolStub(
  context: ToolContext,
  toolName: string,
  index: number,
  kind: string,
  mimeType: string | undefined,
  base64: string,
): Promise<string> {
  const bytes = Math.floor((base64.length * 3) / 4);
  const { spoolId } = await context.store.writeSpool(
    context.sessionId,
    storeKeys.spoolPart(context.toolCallId, index),
    toolName,
    base64,
  );
  return `[${kind} ${mimeType ?? 'application/octet-stream'}, ${bytes} bytes: not shown; its base64 is in spool:${spoolId} (tool-output {"id":"spool:${spoolId}"})]`;
}
