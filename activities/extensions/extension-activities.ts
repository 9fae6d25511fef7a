/**
 * The tool host's activities for what users bring: gathering the workspace context of an execution
 * (environment snapshot, project instructions, MCP tools, hooks), and running the stop and notify
 * hooks. They run on the goal's tool queue, next to the workspace, inside its sandbox.
 */
import { createHash } from 'node:crypto';
import { Context, log } from '@temporalio/activity';
import { capInstructions } from '../../core/extensions/project-instructions';
import {
  type ExtensionSources,
  summaryOf,
  type WorkspaceContextData,
  type WorkspaceContextSummary,
} from '../../core/extensions/workspace-context';
import { DEFAULT_SANDBOX, type SandboxSettings } from '../../core/sandbox-settings';
import { storeKeys } from '../../core/store-keys';
import type { SessionStore } from '../../store/types';
import type { SandboxHost } from '../sandbox/host';
import { createRedactor } from '../sandbox/redact';
import { toolHostRootRefusal } from '../tools/tool-host-root';
import { environmentSnapshot } from './environment-snapshot';
import { type GoalExtensions, goalExtensions, hostTrustsProjects } from './extension-config';
import { hookRunEvent, runHooks } from './hooks';
import type { McpRunContext } from './mcp-connection';
import type { McpHub } from './mcp-hub';
import { listMcpServer } from './mcp-listing';
import { findProjectInstructions } from './project-instructions';
import { gatherWorkspaceFiles } from './workspace-extensions';

/** How often the gathering activity heartbeats while servers start. */
const GATHER_HEARTBEAT_MS = 2_000;

/** Input of `gatherWorkspaceContext`. */
export interface GatherWorkspaceContextInput {
  sessionId: string;
  /** The execution this context is for (1, then one more per resume); with the session, the row's key. */
  execution: number;
  workspace: string;
  sandbox?: SandboxSettings;
  sources?: ExtensionSources;
}

/** Input of `runStopHooks`: the model called finish. */
export interface StopHooksInput {
  sessionId: string;
  workspace: string;
  sandbox?: SandboxSettings;
  /** The finish call, which keys the recorded hook runs. */
  toolCallId: string;
  status: string;
  summary: string;
}

/** Result of `runStopHooks`: a veto keeps the goal going with the reason as a message. */
export interface StopHooksResult {
  veto: string | null;
  failures: string[];
}

/** Input of `runNotifyHooks`: the goal's status changed (the JSON a notify hook reads, less what the host adds). */
export interface NotifyHooksInput {
  sessionId: string;
  workspace: string;
  sandbox?: SandboxSettings;
  /** Keys the recorded runs (one status change, one record). */
  key: string;
  status: Record<string, unknown>;
}

/** What the extension activities need from their worker. */
export interface ExtensionActivityDeps {
  store: SessionStore;
  hub: McpHub;
  host: () => SandboxHost;
  env: NodeJS.ProcessEnv;
  /** A tools worker's workspace root: goals outside it get nothing gathered (their tools are refused too). */
  workspaceRoot?: string;
  secrets?: string[];
}

/**
 * The stored context of a session's newest execution, or null (goals started before it existed). A
 * step names its execution, whose row the store may keep in memory once read.
 */
export async function latestContext(
  store: SessionStore,
  sessionId: string,
  execution?: number,
): Promise<WorkspaceContextData | null> {
  const row = await store.latestWorkspaceContext(sessionId, execution);
  return row ? (row.data as WorkspaceContextData) : null;
}

/** Creates the extension activities. */
export function createExtensionActivities(deps: ExtensionActivityDeps) {
  const { store } = deps;
  /** A goal's hooks and servers as this execution's row pinned them (stop and notify hooks). */
  const extensionsOf = (
    row: WorkspaceContextData | null,
    workspace: string,
    sandbox: SandboxSettings | undefined,
  ): GoalExtensions =>
    goalExtensions({
      sources: row?.sources ?? {},
      workspace,
      home: deps.host().goalrunHome,
      sandbox: sandbox ?? DEFAULT_SANDBOX,
      workspaceFiles: row?.workspaceFiles,
    });

  return {
    /**
     * Gathers what the tool host knows about the workspace for one execution and stores it under
     * (session, execution); a retry finds the stored row and writes nothing. Returns a summary.
     */
    async gatherWorkspaceContext(input: GatherWorkspaceContextInput): Promise<WorkspaceContextSummary> {
      const previous = await store.latestWorkspaceContext(input.sessionId);
      if (previous && previous.execution === input.execution) {
        return summaryOf(previous.data as WorkspaceContextData);
      }
      const context = Context.current();
      const beat = setInterval(() => context.heartbeat(), GATHER_HEARTBEAT_MS);
      try {
        const data = await gather(
          input,
          previous?.data as WorkspaceContextData | undefined,
          context.cancellationSignal,
        );
        const saved = await store.saveWorkspaceContext(input.sessionId, input.execution, data);
        const stored = saved.data as WorkspaceContextData;
        // A resumed session has its row: its notices go into its event log now (a new one's with its first message).
        if (stored.notices.length > 0 && (await store.getSession(input.sessionId))) {
          await recordContextNotices(store, input.sessionId, stored);
        }
        log.info(`workspace context of ${input.sessionId}`, {
          execution: input.execution,
          instructionFiles: stored.instructions.files.length,
          mcpServers: stored.mcp.servers.map(
            (server) => `${server.name}:${server.ok ? server.tools : 'failed'}`,
          ),
        });
        return summaryOf(stored);
      } finally {
        clearInterval(beat);
      }
    },

    /** Runs the stop hooks of a goal whose model called finish. */
    async runStopHooks(input: StopHooksInput): Promise<StopHooksResult> {
      const row = await latestContext(store, input.sessionId);
      const hooks = extensionsOf(row, input.workspace, input.sandbox).hooks.stop;
      if (hooks.length === 0) return { veto: null, failures: [] };
      const verdict = await runHooks(
        'stop',
        hooks,
        {
          event: 'stop',
          session_id: input.sessionId,
          workspace: input.workspace,
          status: input.status,
          summary: input.summary,
        },
        {
          workspace: input.workspace,
          sessionId: input.sessionId,
          sandbox: input.sandbox ?? DEFAULT_SANDBOX,
          host: deps.host(),
          signal: Context.current().cancellationSignal,
        },
      );
      for (const run of verdict.runs) {
        await store.appendEvent(
          input.sessionId,
          'hook',
          hookRunEvent('stop', run),
          storeKeys.hookEvent('stop', input.toolCallId, run.index),
        );
      }
      return { veto: verdict.veto ? redactFor(deps)(verdict.veto.reason) : null, failures: verdict.failures };
    },

    /** Runs the notify hooks of a goal whose status changed; their failures are returned, never thrown. */
    async runNotifyHooks(input: NotifyHooksInput): Promise<{ ran: number; failures: string[] }> {
      const row = await latestContext(store, input.sessionId);
      const hooks = extensionsOf(row, input.workspace, input.sandbox).hooks.notify;
      const failures: string[] = [];
      for (const [index, hook] of hooks.entries()) {
        const verdict = await runHooks(
          'notify',
          [hook],
          { event: 'notify', ...input.status, workspace: input.workspace, time: new Date().toISOString() },
          {
            workspace: input.workspace,
            sessionId: input.sessionId,
            sandbox: input.sandbox ?? DEFAULT_SANDBOX,
            host: deps.host(),
            signal: Context.current().cancellationSignal,
          },
        );
        failures.push(...verdict.failures);
        for (const run of verdict.runs) {
          await store
            .appendEvent(
              input.sessionId,
              'hook',
              hookRunEvent('notify', { ...run, index }, { status: input.status.status }),
              storeKeys.hookEvent('notify', input.key, index),
            )
            .catch(() => undefined);
        }
      }
      return { ran: hooks.length, failures };
    },
  };

  async function gather(
    input: GatherWorkspaceContextInput,
    previous: WorkspaceContextData | undefined,
    signal: AbortSignal,
  ): Promise<WorkspaceContextData> {
    const sandbox = input.sandbox ?? DEFAULT_SANDBOX;
    const host = deps.host();
    const sources = input.sources ?? {};
    const refusal = deps.workspaceRoot
      ? await toolHostRootRefusal(input.workspace, deps.workspaceRoot)
      : null;
    const now = new Date();
    if (refusal) {
      return emptyContext(input, now, sources, refusal);
    }
    // The workspace's own hooks and servers: read once, here, and pinned in the row (trust is pinned
    // to the content the user trusted; a /clear's fresh session goes on with its parent's pins).
    const pinnedBefore =
      previous?.workspaceFiles ??
      (sources.pinnedFrom ? (await latestContext(store, sources.pinnedFrom))?.workspaceFiles : undefined);
    const workspaceFiles = gatherWorkspaceFiles({
      sources,
      workspace: input.workspace,
      sandbox,
      trusted: sources.trustProject === true || hostTrustsProjects(host.goalrunHome),
      execution: input.execution,
      previous: pinnedBefore,
      sessionId: input.sessionId,
    });
    const extensions = goalExtensions({
      sources,
      workspace: input.workspace,
      home: host.goalrunHome,
      sandbox,
      workspaceFiles: workspaceFiles.state,
    });
    const run: McpRunContext = {
      workspace: input.workspace,
      sessionId: input.sessionId,
      sandbox,
      host,
      env: deps.env,
    };
    const [environment, sourcesFound, listed] = await Promise.all([
      environmentSnapshot({
        workspace: input.workspace,
        sessionId: input.sessionId,
        sandbox,
        host,
        now,
        signal,
      }),
      findProjectInstructions(input.workspace, host.goalrunHome),
      Promise.all(extensions.servers.map((server) => listMcpServer(deps.hub, server, run))),
    ]);
    const capped = capInstructions(sourcesFound.sources, extensions.instructionsMaxBytes);
    const digest = createHash('sha256').update(capped.text).digest('hex').slice(0, 16);
    const notices = [...sourcesFound.refused, ...workspaceFiles.notes, ...extensions.problems];
    if (capped.notice) notices.push(capped.notice);
    for (const { entry } of listed) {
      if (!entry.ok || entry.problem)
        notices.push(`MCP server "${entry.name}": ${entry.problem ?? 'failed'}`);
    }
    if (previous && previous.instructions.digest !== digest) {
      notices.push(
        `the project instructions changed since execution ${previous.execution}; the model works by the new ones from now on`,
      );
    }
    const redact = redactFor(
      deps,
      listed.flatMap((item) => item.secrets),
    );
    return {
      execution: input.execution,
      gatheredAt: now.toISOString(),
      environment,
      instructions: {
        text: capped.text,
        files: capped.files,
        capBytes: extensions.instructionsMaxBytes,
        digest,
      },
      mcp: {
        servers: listed.map((item) => ({
          ...item.entry,
          ...(item.entry.problem ? { problem: redact(item.entry.problem) } : {}),
        })),
        tools: listed.flatMap((item) => item.tools),
      },
      hooks: {
        pre_tool: extensions.hooks.pre_tool.length,
        post_tool: extensions.hooks.post_tool.length,
        stop: extensions.hooks.stop.length,
        notify: extensions.hooks.notify.length,
      },
      sources,
      workspaceFiles: workspaceFiles.state,
      notices: notices.map(redact),
    };
  }
}

/** A redactor for the worker's secrets plus these values. */
function redactFor(deps: ExtensionActivityDeps, extra: readonly string[] = []): (text: string) => string {
  return createRedactor([...(deps.secrets ?? []), ...extra]);
}

function emptyContext(
  input: GatherWorkspaceContextInput,
  now: Date,
  sources: ExtensionSources,
  refusal: string,
): WorkspaceContextData {
  return {
    execution: input.execution,
    gatheredAt: now.toISOString(),
    environment: {
      workingDirectory: input.workspace,
      os: 'unknown',
      date: now.toISOString(),
      git: `unknown (${refusal})`,
    },
    instructions: { text: '', files: [], capBytes: 0, digest: '' },
    mcp: { servers: [], tools: [] },
    hooks: { pre_tool: 0, post_tool: 0, stop: 0, notify: 0 },
    sources,
    notices: [refusal],
  };
}

/** Stores a context's notices as notice events (keyed, so writing them twice writes nothing). */
export async function recordContextNotices(
  store: SessionStore,
  sessionId: string,
  data: WorkspaceContextData,
): Promise<void> {
  for (const [index, text] of data.notices.entries()) {
    await store.appendEvent(
      sessionId,
      'notice',
      { text },
      storeKeys.contextNoticeEvent(data.execution, index),
    );
  }
}
