/** Runs the built `goalrun` CLI as a subprocess, the way a user does. */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';

/** The compiled CLI; `npm test` builds it first. */
export const CLI = path.resolve(__dirname, '../../dist/cli/main.js');

/** Result of a finished CLI run. */
export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** An empty temporal.toml: a developer's own profiles (Temporal Cloud, say) stay out of the tests. */
function emptyTemporalConfig(): string {
  const file = path.join(os.tmpdir(), `goalrun-test-temporal-${process.pid}.toml`);
  if (!fs.existsSync(file)) fs.writeFileSync(file, '# no profiles: the test sets TEMPORAL_* itself\n');
  return file;
}

/** A clean environment for the CLI: no provider keys, no database, unless the test adds them. */
export function cliEnv(extra: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  // The Temporal connection is the test's: no credentials or profile of the machine's (issue 29).
  for (const name of Object.keys(env)) {
    if (/^TEMPORAL_(API_KEY|TLS|PROFILE|GRPC_META_)/.test(name)) delete env[name];
  }
  env.TEMPORAL_CONFIG_FILE = emptyTemporalConfig();
  for (const name of [
    'DATABASE_URL',
    'OPENAI_API_KEY',
    'ANTHROPIC_API_KEY',
    'OPENAI_BASE_URL',
    'GOALRUN_MODEL',
    // A developer's own keys would encrypt every test goal; the encryption tests set their own.
    'GOALRUN_PAYLOAD_KEYS',
    'GOALRUN_CODEC_TOKEN',
    // It names the HTTP API of one server: the test's TEMPORAL_ADDRESS may be another.
    'TEMPORAL_HTTP_ADDRESS',
  ]) {
    delete env[name];
  }
  for (const [name, value] of Object.entries(extra)) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}

/** Runs the CLI to completion. */
export function runCli(
  args: string[],
  env: NodeJS.ProcessEnv,
  timeoutMs = 120_000,
  options: { cwd?: string; stdin?: string } = {},
): Promise<CliResult> {
  return collectCli(args, env, timeoutMs, options);
}

/**
 * Runs the CLI to completion in a working directory, with no time limit of its own (the test's timeout
 * applies): names, `sessions`, `clean` and `--last` are scoped to the project of the current directory.
 */
export function runCliIn(cwd: string, args: string[], env: NodeJS.ProcessEnv): Promise<CliResult> {
  return collectCli(args, env, undefined, { cwd });
}

/** Asserts that the CLI exited 0 and parses what it printed as JSON (a `--json` command's answer). */
export function expectJson(result: CliResult): Record<string, any> {
  expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
  return JSON.parse(result.stdout);
}

/** Runs the CLI and gathers its output; killed and rejected after `timeoutMs` when one is given. */
function collectCli(
  args: string[],
  env: NodeJS.ProcessEnv,
  timeoutMs: number | undefined,
  options: { cwd?: string; stdin?: string },
): Promise<CliResult> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env,
      cwd: options.cwd,
      stdio: [options.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    if (options.stdin !== undefined) child.stdin?.end(options.stdin);
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr?.on('data', (chunk) => {
      stderr += chunk;
    });
    const timer =
      timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            child.kill('SIGKILL');
            reject(
              new Error(
                `goalrun ${args.join(' ')} timed out after ${timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`,
              ),
            );
          }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: Date.now() - started });
    });
  });
}

/** Starts a long-running CLI command (e.g. `worker`); the caller kills it. */
export function spawnCli(
  args: string[],
  env: NodeJS.ProcessEnv,
): ChildProcess & { output: () => string; stdoutText: () => string; stderrText: () => string } {
  const child = spawn(process.execPath, [CLI, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  // Both streams as they interleaved (what a terminal shows), and each alone (stdout for --json). Not
  // named stdout/stderr: those are the child's streams, which other tests read.
  let output = '';
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk) => {
    output += chunk;
    stdout += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    output += chunk;
    stderr += chunk;
  });
  return Object.assign(child, { output: () => output, stdoutText: () => stdout, stderrText: () => stderr });
}

/** Kills a child and waits for it to exit. */
export async function killAndWait(child: ChildProcess, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill(signal);
  await exited;
}

/** A new empty directory under the OS temp dir. */
export function tempDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `goalrun-${prefix}-`));
}

/** Writes a scripted model file and returns its `scripted:` specifier. */
export function scriptedModel(dir: string, turns: unknown[]): string {
  const file = path.join(dir, `script-${Math.random().toString(36).slice(2)}.json`);
  fs.writeFileSync(file, JSON.stringify({ turns }, null, 2));
  return `scripted:${file}`;
}

/**
 * A slow check waits this many times its own duration before the next try: a check that runs the CLI
 * (about 0.3 s of CPU a process) then uses at most a third of a core, where a fixed 250 ms made a
 * waiting test spawn processes back to back, slowing the goal it waited for and every other file.
 */
const SLOW_CHECK_BACKOFF = 2;
/** The longest pause between two tries, however slow the check. */
const MAX_POLL_INTERVAL_MS = 2_000;

/**
 * Polls until `check` returns a value (not undefined/false), or fails after `timeoutMs`. A cheap check
 * is tried every `intervalMs`; one that takes long (a CLI run) waits twice its own time in between.
 */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 60_000,
  intervalMs = 250,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    const tried = Date.now();
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value as T;
    } catch (err) {
      lastError = err;
    }
    const took = Date.now() - tried;
    const pause = Math.max(intervalMs, Math.min(MAX_POLL_INTERVAL_MS, took * SLOW_CHECK_BACKOFF));
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
  throw new Error(
    `timed out waiting for ${what}${lastError ? ` (last error: ${(lastError as Error).message})` : ''}`,
  );
}
