/**
 * The two builds of the upgrade test, each as its own `goalrun` CLI: the previous release's (built
 * by scripts/release-build.js) and this checkout's. Workers log to files, read after the run.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { type CliResult, killAndWait } from '../support/cli';

/** One build's CLI. */
export interface Build {
  /** What reports call it, e.g. `0.1.0` or `current`. */
  label: string;
  /** Its dist/cli/main.js. */
  cli: string;
}

/** A build in a directory with a dist/ folder. */
export function buildAt(label: string, dir: string): Build {
  const cli = path.join(dir, 'dist', 'cli', 'main.js');
  if (!fs.existsSync(cli)) throw new Error(`${label}: ${cli} is missing (build it first)`);
  return { label, cli };
}

/** Runs one command of a build to completion. */
export function runBuild(
  build: Build,
  args: string[],
  env: NodeJS.ProcessEnv,
  timeoutMs = 120_000,
): Promise<CliResult> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [build.cli, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new Error(
          `${build.label}: goalrun ${args.join(' ')} timed out\nstdout: ${stdout}\nstderr: ${stderr}`,
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

/** A worker of a build, its output appended to `logFile`. */
export interface RunningWorker {
  build: Build;
  child: ChildProcess;
  logFile: string;
}

/** Starts `goalrun worker` of a build. */
export function startWorker(build: Build, env: NodeJS.ProcessEnv, logFile: string): RunningWorker {
  fs.mkdirSync(path.dirname(logFile), { recursive: true });
  const log = fs.openSync(logFile, 'a');
  const child = spawn(process.execPath, [build.cli, 'worker'], { env, stdio: ['ignore', log, log] });
  fs.closeSync(log);
  return { build, child, logFile };
}

/** Stops a worker: SIGKILL, as a crash or a hard redeploy does. */
export function killWorker(worker: RunningWorker, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
  return killAndWait(worker.child, signal);
}

/** The lines of a worker log that report a nondeterminism error. */
export function determinismErrors(logFile: string): string[] {
  if (!fs.existsSync(logFile)) return [];
  return fs
    .readFileSync(logFile, 'utf8')
    .split('\n')
    .filter((line) => /TMPRL1100|[Nn]ondeterminism/.test(line));
}
