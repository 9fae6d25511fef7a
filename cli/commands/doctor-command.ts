/**
 * `goalrun doctor`: checks bubblewrap (and that it starts a sandbox here), ripgrep, the temporal
 * CLI, the database, the provider keys, and the Temporal connection (where each setting came from,
 * and whether the server answers with it), one line each; each missing item names its fix.
 * Exits 1 when something a goal cannot run without is missing.
 */
import { type DoctorCheck, formatDoctorCheck, runDoctorChecks } from '../../activities/sandbox/doctor';
import type { SandboxMode } from '../../core/sandbox-settings';
import { machineCacheSizing } from '../../worker/machine-memory';
import { describeCacheSizing } from '../../worker/workflow-cache';
import type { CliContext } from '../context';
import { ExitCode } from '../exit-codes';
import { extensionSourcesFromOptions, resolveWorkspace, sandboxFromOptions } from '../goal-options';
import { printJson, say } from '../output';
import { findTemporalBinary } from '../temporal-binary';
import { temporalDoctorChecks } from '../temporal-doctor';

/** Options of `goalrun doctor`. */
export interface DoctorOptions {
  json?: boolean;
  /** The sandbox mode goals will use (`--sandbox`); with `off`, bubblewrap is optional. */
  sandbox?: SandboxMode;
  /** The workspace whose instructions and project MCP servers to check (default: the current directory). */
  workspace?: string;
  mcpConfig?: string;
  trustProject?: boolean;
  trustProjectMcp?: boolean;
  network?: boolean;
}

/** Runs the checks and prints them; the exit code says whether a required item is missing. */
export async function doctorCommand(context: CliContext, options: DoctorOptions = {}): Promise<number> {
  const { settings } = context;
  const checks: DoctorCheck[] = await runDoctorChecks({
    env: process.env,
    home: settings.home,
    databaseUrl: settings.databaseUrl,
    describeStore: context.describeStore(),
    sandboxMode: options.sandbox,
    findTemporalBinary,
    ...(settings.config.api_key_env ? { apiKeyEnv: settings.config.api_key_env } : {}),
  });
  checks.push(configFilesCheck(settings.configFiles ?? []));
  checks.push(workflowCacheCheck());
  checks.push(...(await temporalDoctorChecks(settings, process.env)));
  checks.push(...(await extensionChecks(context, options)));
  if (options.json) printJson({ checks });
  else for (const check of checks) for (const line of formatDoctorCheck(check)) say(line);
  return checks.some((check) => check.required && !check.ok) ? ExitCode.failedOrBlocked : ExitCode.completed;
}

/** Which config files were read: the global one, then the project's (`.goalrun/config.json`). */
function configFilesCheck(files: string[]): DoctorCheck {
  return {
    name: 'config files',
    ok: true,
    required: false,
    detail: files.length > 0 ? `read ${files.join(', then ')}` : 'none (defaults and the environment only)',
  };
}

/** How many goals a worker of this machine keeps in memory (goalrun worker --max-memory). */
function workflowCacheCheck(): DoctorCheck {
  try {
    return {
      name: 'worker memory',
      ok: true,
      required: false,
      detail: describeCacheSizing(machineCacheSizing()),
    };
  } catch (err) {
    return { name: 'worker memory', ok: false, required: false, detail: (err as Error).message };
  }
}

/** The checks of the workspace's instructions, hooks and MCP servers (each server is started). */
async function extensionChecks(context: CliContext, options: DoctorOptions): Promise<DoctorCheck[]> {
  const { extensionDoctorChecks } =
    require('../../activities/extensions/doctor-checks') as typeof import('../../activities/extensions/doctor-checks');
  const { checkMcpConfigFile } =
    require('../../activities/extensions/extension-config') as typeof import('../../activities/extensions/extension-config');
  const { sandboxHostFromEnv } =
    require('../../activities/sandbox/host') as typeof import('../../activities/sandbox/host');
  const workspace = resolveWorkspace(options.workspace);
  const goalOptions = {
    sandbox: options.sandbox,
    network: options.network,
    mcpConfig: options.mcpConfig,
    trustProject: options.trustProject,
    trustProjectMcp: options.trustProjectMcp,
  };
  const sandbox = sandboxFromOptions(goalOptions, context.settings);
  return extensionDoctorChecks({
    workspace,
    sources:
      extensionSourcesFromOptions(goalOptions, context.settings, false, (file) =>
        checkMcpConfigFile(file, workspace, sandbox),
      ) ?? {},
    sandbox,
    host: sandboxHostFromEnv(process.env),
    env: process.env,
    secrets: context.knownSecrets(),
  });
}
