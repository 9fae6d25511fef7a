/**
 * How a tool process is started under a goal's sandbox settings: the program, its arguments, its
 * environment. A sandbox that cannot start is an error naming the fix, never a silent fallback to
 * running unsandboxed.
 */
import { DEFAULT_RESOURCE_LIMITS, type SandboxSettings } from '../../core/sandbox-settings';
import { buildBwrapArgs, isWithin, SANDBOX_TMP } from './bwrap-args';
import { concealment, realExistingDir } from './concealment';
import { isProviderOrStoreName, toolEnvironment } from './environment';
import { prepareGitProtection } from './git-protection';
import { ensureSessionDirs, SANDBOX_HOME, type SandboxHost } from './host';
import { checkSandbox } from './probe';
import { type CallLimits, limitCall } from './resource-limits';

/**
 * Merges stderr into stdout in the child itself so both arrive through one pipe in the order they
 * were written (two pipes read by Node interleave unpredictably). `exec` keeps the leader's pid.
 */
const MERGE_STDERR_SCRIPT = 'exec bash -c "$1" 2>&1';

/** The file descriptor on which bwrap reports the sandbox's pid. */
export const BWRAP_INFO_FD = 3;

/** What to start for one command. */
export interface LaunchSpec {
  file: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  /** True when the process runs in bubblewrap (its stderr then carries only bwrap's own errors). */
  sandboxed: boolean;
  /** The call's resource limits, when the request asked for them: what it went over, and cleanup. */
  limits?: CallLimits;
}

/** What the caller knows about the command to start. */
export interface LaunchRequest {
  command: string;
  workspace: string;
  sessionId: string;
  settings: SandboxSettings;
  /** A human approved running this one command outside the sandbox. */
  escalated: boolean;
  host: SandboxHost;
  /**
   * Run this program and its arguments as they are instead of `bash -c command` with stderr merged
   * into stdout (MCP servers and hooks talk over stdin/stdout and keep stderr apart).
   */
  argv?: readonly string[];
  /** Variables set after the allow-list (an MCP server's configured `env`); forbidden names never pass. */
  extraEnv?: Record<string, string>;
  /** Whether bwrap reports the sandbox's pid on fd 3 (the caller must then open it); default true. */
  infoFd?: boolean;
  /**
   * Limit memory, processes and CPU time (sandbox limits); the caller then calls `spec.limits.cleanup()`
   * once the process is gone. Tool calls, jobs, hooks and MCP servers all are.
   */
  limited?: boolean;
}

/**
 * The program to start for a command, or the one line saying why the sandbox cannot start.
 * `off` (by name, or for one approved escalation) runs bash directly with the allow-listed env.
 */
export async function prepareLaunch(
  request: LaunchRequest,
): Promise<{ ok: true; spec: LaunchSpec } | { ok: false; error: string }> {
  const prepared = await prepareUnlimited(request);
  // A human-approved escalation runs as the human would run it.
  if (!prepared.ok || !request.limited || request.escalated) return prepared;
  const limits = limitCall(request.settings.limits ?? DEFAULT_RESOURCE_LIMITS);
  const wrapped = limits.wrap(prepared.spec.file, prepared.spec.args);
  return { ok: true, spec: { ...prepared.spec, ...wrapped, limits } };
}

async function prepareUnlimited(
  request: LaunchRequest,
): Promise<{ ok: true; spec: LaunchSpec } | { ok: false; error: string }> {
  const { settings, host } = request;
  const inner = request.argv
    ? [...request.argv]
    : ['bash', '-c', MERGE_STDERR_SCRIPT, 'bash', request.command];
  if (request.escalated || settings.mode === 'off') {
    return {
      ok: true,
      spec: {
        file: inner[0],
        args: inner.slice(1),
        env: withExtraEnv(toolEnvironment(host.hostEnv, settings.env), request.extraEnv),
        cwd: request.workspace,
        sandboxed: false,
      },
    };
  }
  const probe = await checkSandbox(host);
  if (!probe.ok) return { ok: false, error: probe.problem };
  const workspace = realExistingDir(request.workspace);
  if (!workspace) return { ok: false, error: `workspace directory does not exist: ${request.workspace}` };
  const writableRoots = settings.writableRoots
    .map(realExistingDir)
    .filter((dir): dir is string => dir !== undefined);
  const dirs = ensureSessionDirs(host, request.sessionId);
  const binds = [workspace, ...writableRoots];
  const concealed = concealment(host, binds, settings.network);
  const installDir = realExistingDir(host.installDir);
  const writable = settings.mode === 'workspace-write';
  // Hooks and git config stay read-only inside writable roots (only there: elsewhere all is read-only,
  // and a hooks path in a hidden home must stay hidden rather than be shown read-only).
  const git = writable ? await prepareGitProtection(binds) : { readOnly: [], pinned: [] };
  const gitReadOnly = git.readOnly.filter((entry) => binds.some((bind) => isWithin(entry, bind)));
  const args = buildBwrapArgs({
    writable,
    network: settings.network,
    workspace,
    writableRoots: [...writableRoots, ...git.pinned],
    privateTmp: dirs.tmp,
    hide: concealed.hide,
    protect: [...(installDir ? [installDir] : []), ...gitReadOnly],
    expose: concealed.expose,
    maskFiles: concealed.maskFiles,
    cwd: workspace,
    infoFd: request.infoFd === false ? undefined : BWRAP_INFO_FD,
    command: inner,
  });
  return {
    ok: true,
    spec: {
      file: host.bwrapPath as string,
      args,
      env: withExtraEnv(
        toolEnvironment(host.hostEnv, settings.env, { HOME: SANDBOX_HOME, TMPDIR: SANDBOX_TMP }),
        request.extraEnv,
      ),
      cwd: workspace,
      sandboxed: true,
    },
  };
}

/** The environment with a caller's own variables added; names that must never reach a tool are skipped. */
function withExtraEnv(
  env: Record<string, string>,
  extra: Record<string, string> | undefined,
): Record<string, string> {
  if (!extra) return env;
  const merged = { ...env };
  for (const [name, value] of Object.entries(extra)) if (!isProviderOrStoreName(name)) merged[name] = value;
  return merged;
}
