/**
 * What goalrun records about a dev server it started (`goalrun dev` or the background server):
 * `GOALRUN_HOME/temporal-dev.json` with its frontend address, Web UI port, HTTP API port and pid.
 * The Web UI link (web-ui.ts) and the read-only commands' HTTP reader (context.ts) read it. Checked
 * by hand, not with zod, so reading it costs the light commands nothing (issue 10).
 */
import { existsSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { processExists } from '../system/processes';
import { isLocalHost, parseTemporalAddress } from './temporal-address';

/** File under GOALRUN_HOME in which goalrun's dev server (foreground or background) records its ports. */
export const DEV_SERVER_RECORD_FILE = 'temporal-dev.json';

const MAX_PORT = 65_535;

/** What goalrun records about a dev server it started. */
export interface DevServerRecord {
  /** The frontend address the server answers at, `host:port`. */
  address: string;
  /** Web UI port; null when the server runs headless. */
  uiPort: number | null;
  /** HTTP API port (`--http-port`); absent in records of older goalrun versions. */
  httpPort?: number;
  pid: number;
}

function isPort(value: unknown): value is number {
  return Number.isInteger(value) && (value as number) >= 1 && (value as number) <= MAX_PORT;
}

/** A record read back from JSON, or null when it is not one (a partial write, an older shape, a stray file). */
export function parseDevServerRecord(json: unknown): DevServerRecord | null {
  if (typeof json !== 'object' || json === null) return null;
  const { address, uiPort, httpPort, pid } = json as Record<string, unknown>;
  if (typeof address !== 'string' || address === '') return null;
  if (uiPort !== null && !isPort(uiPort)) return null;
  if (httpPort !== undefined && !isPort(httpPort)) return null;
  if (!Number.isInteger(pid) || (pid as number) <= 0) return null;
  return {
    address,
    uiPort,
    ...(httpPort === undefined ? {} : { httpPort }),
    pid: pid as number,
  } as DevServerRecord;
}

/** Writes the dev-server record; called right after goalrun spawns a dev server. */
export function writeDevServerRecord(home: string, record: DevServerRecord): void {
  const checked = parseDevServerRecord(record);
  if (!checked) throw new Error(`not a dev-server record: ${JSON.stringify(record)}`);
  writeFileSync(join(home, DEV_SERVER_RECORD_FILE), `${JSON.stringify(checked)}\n`);
}

/** Removes the dev-server record (the server stopped); a missing record is fine. */
export function removeDevServerRecord(home: string): void {
  try {
    unlinkSync(join(home, DEV_SERVER_RECORD_FILE));
  } catch {
    // Already gone.
  }
}

/**
 * The record of the dev server that serves the frontend port `port` on this machine, while that
 * server lives; null otherwise (a record outlives a killed server, and its pid may be reused).
 */
export function liveDevServerRecord(home: string, port: number, procDir = '/proc'): DevServerRecord | null {
  let record: DevServerRecord | null;
  try {
    record = parseDevServerRecord(JSON.parse(readFileSync(join(home, DEV_SERVER_RECORD_FILE), 'utf8')));
  } catch {
    return null;
  }
  if (!record) return null;
  const recorded = parseTemporalAddress(record.address);
  if (recorded.port !== port || !isLocalHost(recorded.host)) return null;
  return isLiveDevServer(record.pid, procDir) ? record : null;
}

/** The HTTP API port of the live dev server goalrun started for `temporalAddress`, if it recorded one. */
export function recordedHttpPort(home: string, temporalAddress: string, procDir = '/proc'): number | null {
  let target: { host: string; port: number };
  try {
    target = parseTemporalAddress(temporalAddress);
  } catch {
    return null;
  }
  if (!isLocalHost(target.host)) return null;
  return liveDevServerRecord(home, target.port, procDir)?.httpPort ?? null;
}

/** Whether `pid` is a live `temporal server start-dev` process. */
export function isLiveDevServer(pid: number, procDir: string): boolean {
  if (!existsSync(procDir)) {
    // No process table (macOS): a live pid is the best evidence there is.
    return processExists(pid);
  }
  const argv = readCommandLine(procDir, pid);
  return argv !== null && isDevServerCommand(argv);
}

/** A process's argv from the process table; null when the process is gone or unreadable. */
export function readCommandLine(procDir: string, pid: number): string[] | null {
  try {
    const args = readFileSync(join(procDir, String(pid), 'cmdline'), 'utf8').split('\0');
    // Each argument ends with a NUL, so the split leaves one empty string at the end.
    if (args.at(-1) === '') args.pop();
    return args;
  } catch {
    return null;
  }
}

/** True for `… server start-dev …` (the temporal CLI's dev server, wherever its binary lives). */
export function isDevServerCommand(argv: readonly string[]): boolean {
  return argv.some((arg, index) => arg === 'start-dev' && argv[index - 1] === 'server');
}
