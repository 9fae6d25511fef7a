/**
 * `goalrun doctor`: what a machine needs before a goal runs, checked for real (bubblewrap must
 * start a sandbox, the database must answer), one line per item, each missing item with its fix.
 */
import { execFile } from 'node:child_process';
import { accessSync, constants, existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import type { SandboxMode } from '../../core/sandbox-settings';
import { Client } from '../../store/pg';
import { isExecutableFile } from '../../system/executables';
import { DEFAULT_COMPATIBLE_KEY_ENV, OPENAI_API_HOST } from '../providers/spec';
import { findExecutable } from './host';
import { probeSandbox } from './probe';
import { redactSecrets, urlPassword } from './redact';
import { describeMechanism, type LimitMechanism, limitMechanism } from './resource-limits';

/** How long the database check waits for a connection. */
const DATABASE_TIMEOUT_MS = 5_000;
/** How long a `--version` call may take. */
const VERSION_TIMEOUT_MS = 5_000;

/** What the doctor looks at. */
export interface DoctorInput {
  env: NodeJS.ProcessEnv;
  /** goalrun's data directory (the embedded store lives under it). */
  home: string;
  databaseUrl?: string;
  /** A one-line description of the store without credentials. */
  describeStore: string;
  /** The sandbox mode goals will use; with `off`, bubblewrap is not required. */
  sandboxMode?: SandboxMode;
  /** Finds the temporal CLI (cli/temporal-binary.ts), passed in so activities do not import cli/. */
  findTemporalBinary: (env: NodeJS.ProcessEnv) => string | null;
  /** How tool calls are limited here; detected when absent (tests pass their own). */
  limitMechanism?: LimitMechanism;
  /** Connects to the database and runs a query; tests pass their own. */
  checkDatabase?: (databaseUrl: string) => Promise<void>;
  /** The variable config `api_key_env` names for openai-compatible endpoints, when it names one. */
  apiKeyEnv?: string;
}

/** One checked item. */
export interface DoctorCheck {
  name: string;
  ok: boolean;
  /** A missing required item makes `goalrun doctor` exit non-zero. */
  required: boolean;
  detail: string;
  /** What to do about a missing item. */
  fix?: string;
  /** More lines shown under the check (what a server that failed said on stderr). */
  more?: string[];
}

function versionOf(file: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(file, ['--version'], { timeout: VERSION_TIMEOUT_MS }, (error, stdout) => {
      resolve(error ? undefined : stdout.split('\n')[0]?.trim() || undefined);
    });
  });
}

async function bubblewrapCheck(input: DoctorInput): Promise<DoctorCheck> {
  const required = input.sandboxMode !== 'off';
  const bwrap = findExecutable('bwrap', input.env);
  const name = 'bubblewrap';
  if (!bwrap) {
    return {
      name,
      ok: false,
      required,
      detail: 'not installed: bash cannot run sandboxed',
      fix: 'apt-get install bubblewrap (or run goals with --sandbox off)',
    };
  }
  const probe = await probeSandbox(bwrap);
  if (!probe.ok) {
    const reason = /\((.*)\);/.exec(probe.problem)?.[1] ?? probe.problem;
    return {
      name,
      ok: false,
      required,
      detail: `${bwrap} cannot start a sandbox here (${reason})`,
      fix: 'allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, or run as root), or run goals with --sandbox off',
    };
  }
  return { name, ok: true, required, detail: `${probe.version} at ${bwrap} starts a sandbox here` };
}

async function ripgrepCheck(input: DoctorInput): Promise<DoctorCheck> {
  const rg = findExecutable('rg', input.env);
  if (!rg) {
    return {
      name: 'ripgrep',
      ok: false,
      required: false,
      detail: 'not installed: grep falls back to a slower search in a Node child process',
      fix: 'apt-get install ripgrep',
    };
  }
  return { name: 'ripgrep', ok: true, required: false, detail: `${(await versionOf(rg)) ?? 'rg'} at ${rg}` };
}

function temporalCheck(input: DoctorInput): DoctorCheck {
  const found = input.findTemporalBinary(input.env);
  // goalrun quietly falls back to PATH and its cache; a wrong explicit setting is still worth a word.
  const explicit = input.env.TEMPORAL_CLI_PATH;
  if (explicit && !isExecutableFile(explicit)) {
    return {
      name: 'temporal CLI',
      ok: false,
      required: false,
      detail: `TEMPORAL_CLI_PATH=${explicit} is not an executable file${found ? ` (goalrun falls back to ${found})` : ''}`,
      fix: `point TEMPORAL_CLI_PATH at the temporal binary, or unset it${found ? '' : ' and run npm run temporal (builds it once into ~/.cache/goalrun/bin)'}`,
    };
  }
  if (!found) {
    return {
      name: 'temporal CLI',
      ok: false,
      required: false,
      detail: 'not found: goalrun cannot start a local Temporal dev server',
      fix: 'npm run temporal (builds it once into ~/.cache/goalrun/bin), or set TEMPORAL_CLI_PATH, or set TEMPORAL_ADDRESS to a running server',
    };
  }
  return { name: 'temporal CLI', ok: true, required: false, detail: found };
}

/** Connects with pg and runs `SELECT 1`. */
async function connectAndQuery(databaseUrl: string): Promise<void> {
  const client = new Client({ connectionString: databaseUrl, connectionTimeoutMillis: DATABASE_TIMEOUT_MS });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('SELECT 1');
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function databaseCheck(input: DoctorInput): Promise<DoctorCheck> {
  const name = 'database';
  if (!input.databaseUrl) {
    const dir = path.join(input.home, 'store');
    try {
      mkdirSync(input.home, { recursive: true });
      accessSync(existsSync(dir) ? dir : input.home, constants.W_OK);
    } catch (error) {
      return {
        name,
        ok: false,
        required: true,
        detail: `${input.describeStore}: not writable (${(error as Error).message})`,
        fix: `make ${input.home} writable, set GOALRUN_HOME to a writable directory, or set DATABASE_URL`,
      };
    }
    return {
      name,
      ok: true,
      required: true,
      detail: `${input.describeStore} (shared by every goalrun process of this user on this machine; set DATABASE_URL to share it across machines)`,
    };
  }
  try {
    await (input.checkDatabase ?? connectAndQuery)(input.databaseUrl);
    return { name, ok: true, required: true, detail: `${input.describeStore} answers` };
  } catch (error) {
    // A driver's message can quote the connection string; never print its password.
    const password = urlPassword(input.databaseUrl);
    const reason = redactSecrets(
      (error as Error).message,
      password ? [password, input.databaseUrl] : [input.databaseUrl],
    );
    return {
      name,
      ok: false,
      required: true,
      detail: `${input.describeStore}: cannot connect (${reason})`,
      fix: 'start PostgreSQL or correct DATABASE_URL (or unset it to use the embedded store)',
    };
  }
}

function providerKeyCheck(
  input: DoctorInput,
  variable: string,
  provider: string,
  goesTo: string,
): DoctorCheck {
  const value = input.env[variable];
  if (value)
    return {
      name: variable,
      ok: true,
      required: false,
      detail: `set (${provider}:<model> models work; ${goesTo})`,
    };
  return {
    name: variable,
    ok: false,
    required: false,
    detail: `not set: ${provider}:<model> models cannot run on this worker`,
    fix: `export ${variable}=... in the worker's environment (not needed for scripted: or ollama: models)`,
  };
}

/**
 * The key an openai-compatible endpoint gets (issue 24 §8): its own variable, never OPENAI_API_KEY
 * (unless the endpoint is api.openai.com). Not set is fine for a local server that needs none.
 */
function compatibleKeyCheck(input: DoctorInput): DoctorCheck {
  const variable = input.apiKeyEnv ?? DEFAULT_COMPATIBLE_KEY_ENV;
  const where = input.apiKeyEnv ? ' (config api_key_env)' : '';
  const goesTo = `sent to openai-compatible:<model> endpoints only${where}; OPENAI_API_KEY goes to ${OPENAI_API_HOST} only, --api-key-env names another variable per goal`;
  return {
    name: 'openai-compatible key',
    ok: true,
    required: false,
    detail: input.env[variable]
      ? `${variable} set (${goesTo})`
      : `${variable} not set: openai-compatible endpoints get no key, as local servers need none (${goesTo})`,
  };
}

/** Which mechanism limits each tool call's memory, processes and CPU time on this machine. */
function resourceLimitsCheck(input: DoctorInput): DoctorCheck {
  const { detail, ok } = describeMechanism(input.limitMechanism ?? limitMechanism());
  return {
    name: 'resource limits',
    ok,
    required: false,
    detail,
    fix: 'run the worker where it may create cgroups (cgroup v2 with memory and pids delegated, or writable v1 memory and pids hierarchies), or as a non-root user (RLIMIT_NPROC), and install util-linux (prlimit)',
  };
}

/** Runs every check; never throws. */
export async function runDoctorChecks(input: DoctorInput): Promise<DoctorCheck[]> {
  const [bubblewrap, ripgrep, database] = await Promise.all([
    bubblewrapCheck(input),
    ripgrepCheck(input),
    databaseCheck(input),
  ]);
  return [
    bubblewrap,
    resourceLimitsCheck(input),
    ripgrep,
    temporalCheck(input),
    database,
    providerKeyCheck(input, 'OPENAI_API_KEY', 'openai', `sent to ${OPENAI_API_HOST} only`),
    providerKeyCheck(input, 'ANTHROPIC_API_KEY', 'anthropic', 'sent to Anthropic only'),
    compatibleKeyCheck(input),
  ];
}

/** One line: `ok       name: detail` or `missing  name: detail; fix: …`. */
export function formatDoctorLine(check: DoctorCheck): string {
  const status = check.ok ? 'ok     ' : 'missing';
  const fix = check.ok || !check.fix ? '' : `; fix: ${check.fix}`;
  return `${status}  ${check.name}: ${check.detail}${fix}`;
}

/** The check's line, then its further lines indented under it. */
export function formatDoctorCheck(check: DoctorCheck): string[] {
  return [formatDoctorLine(check), ...(check.more ?? []).map((line) => `         | ${line}`)];
}
