/**
 * What users bring, around one tool call on the tool host: the pre_tool hooks (a veto keeps the call
 * from running, and its reason is the result the model sees), MCP tools, the post_tool hooks (their
 * output is added to the result) and a nested directory's AGENTS.md the first time the model works
 * there. Applies only to goals whose execution gathered a workspace context (older goals: nothing).
 */
import { isMcpToolName } from '../../core/extensions/mcp-names';
import { nestedInstructionsText } from '../../core/extensions/project-instructions';
import type { WorkspaceContextData } from '../../core/extensions/workspace-context';
import { DEFAULT_SANDBOX } from '../../core/sandbox-settings';
import { storeKeys } from '../../core/store-keys';
import { clipHead } from '../../core/text';
import { TOOL } from '../../core/tool-names';
import type { SandboxHost } from '../sandbox/host';
import type { ToolContext, ToolOutcome } from '../tools/types';
import { goalExtensions } from './extension-config';
import { hookRunEvent, matchingHooks, runHooks } from './hooks';
import type { McpHub } from './mcp-hub';
import { runMcpToolCall } from './mcp-tool-call';
import { nestedInstructions } from './project-instructions';

/** Tools whose `path` argument says where the model works. */
const PATH_TOOLS: ReadonlySet<string> = new Set([
  TOOL.fileRead,
  TOOL.fileWrite,
  TOOL.fileEdit,
  TOOL.glob,
  TOOL.grep,
]);
/** Most of a tool's output a post_tool hook is given on stdin. */
const HOOK_OUTPUT_MAX_CHARS = 64 * 1024;

/** The key of the event that marks a nested instruction file as shown to the model. */
export function nestedInstructionsKey(label: string): string {
  return storeKeys.nestedInstructionsEvent(label);
}

/** What the extensions did to a call. */
export interface ExtendedOutcome extends ToolOutcome {
  /** Values to redact from the output besides the worker's secrets (an HTTP server's header values). */
  secrets?: readonly string[];
  /** Nested instruction files shown with this result: marked once the result is stored. */
  instructionsShown?: string[];
}

/** What the extensions need from the tool activity's worker. */
export interface ToolCallExtensionDeps {
  hub: McpHub;
  host: SandboxHost;
  env: NodeJS.ProcessEnv;
}

function argsObject(raw: unknown): Record<string, unknown> {
  let value = raw;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      return {};
    }
  }
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

/** Runs a call with the goal's hooks, MCP servers and nested instructions around `execute`. */
export async function runWithExtensions(
  toolName: string,
  rawInput: unknown,
  row: WorkspaceContextData | null,
  context: ToolContext,
  deps: ToolCallExtensionDeps,
  execute: () => Promise<ToolOutcome>,
): Promise<ExtendedOutcome> {
  if (!row) return execute();
  // The workspace's own hooks and servers as this execution pinned them: never the files as they are now.
  const extensions = goalExtensions({
    sources: row.sources,
    workspace: context.workspace,
    home: deps.host.goalrunHome,
    sandbox: context.sandbox ?? DEFAULT_SANDBOX,
    workspaceFiles: row.workspaceFiles,
  });
  const hookContext = {
    workspace: context.workspace,
    sessionId: context.sessionId,
    sandbox: context.sandbox ?? DEFAULT_SANDBOX,
    host: deps.host,
    signal: context.signal,
  };
  const toolPayload = { name: toolName, call_id: context.toolCallId, input: argsObject(rawInput) };
  const notes: string[] = [];
  const record = async (
    event: 'pre_tool' | 'post_tool',
    runs: Awaited<ReturnType<typeof runHooks>>['runs'],
  ) => {
    for (const run of runs) {
      await context.store.appendEvent(
        context.sessionId,
        'hook',
        hookRunEvent(event, run, { tool: toolName, toolCallId: context.toolCallId }),
        storeKeys.hookEvent(event, context.toolCallId, run.index),
      );
    }
  };

  const pre = matchingHooks(extensions.hooks.pre_tool, toolName);
  if (pre.length > 0) {
    const verdict = await runHooks(
      'pre_tool',
      pre,
      { event: 'pre_tool', session_id: context.sessionId, workspace: context.workspace, tool: toolPayload },
      hookContext,
    );
    await record('pre_tool', verdict.runs);
    if (verdict.veto) {
      return {
        ok: false,
        output: `[denied by a pre_tool hook; the call did not run] ${verdict.veto.reason}`,
        changedWorkspace: false,
      };
    }
    notes.push(...verdict.failures.map((line) => `[goalrun: ${line}; on_error allowed the call]`));
  }

  let outcome: ExtendedOutcome = isMcpToolName(toolName)
    ? await runMcpToolCall(toolName, rawInput, row, context, {
        hub: deps.hub,
        servers: () => extensions.servers,
        run: {
          workspace: context.workspace,
          sessionId: context.sessionId,
          sandbox: hookContext.sandbox,
          host: deps.host,
          env: deps.env,
        },
      })
    : await execute();

  const post = matchingHooks(extensions.hooks.post_tool, toolName);
  if (post.length > 0) {
    const verdict = await runHooks(
      'post_tool',
      post,
      {
        event: 'post_tool',
        session_id: context.sessionId,
        workspace: context.workspace,
        tool: toolPayload,
        result: { ok: outcome.ok, output: clipHead(outcome.output, HOOK_OUTPUT_MAX_CHARS) },
      },
      hookContext,
    );
    await record('post_tool', verdict.runs);
    for (const run of verdict.runs) {
      const said = run.outcome === 'veto' ? run.stderr : run.outcome === 'ok' ? run.stdout : '';
      if (said) notes.push(`[post_tool hook] ${said}`);
    }
    notes.push(...verdict.failures.map((line) => `[goalrun: ${line}]`));
  }

  const shown: string[] = [];
  const target = argsObject(rawInput).path;
  if (PATH_TOOLS.has(toolName) && typeof target === 'string') {
    for (const nested of await nestedInstructions(context.workspace, target)) {
      if ('refused' in nested) {
        // Said once: the model learns why the directory's rules are missing.
        const key = `${nested.label} (not read)`;
        if (await context.store.getEventByKey(context.sessionId, nestedInstructionsKey(key))) continue;
        notes.push(`[goalrun: ${nested.refused}]`);
        shown.push(key);
        continue;
      }
      if (await context.store.getEventByKey(context.sessionId, nestedInstructionsKey(nested.label))) continue;
      if (nested.text.trim() === '') continue;
      notes.push(nestedInstructionsText(nested.label, nested.text, extensions.instructionsMaxBytes));
      shown.push(nested.label);
    }
  }
  if (notes.length > 0) outcome = { ...outcome, output: `${outcome.output}\n\n${notes.join('\n\n')}` };
  return shown.length > 0 ? { ...outcome, instructionsShown: shown } : outcome;
}
