/**
 * Where the Temporal Web UI of the server goalrun talks to is. The UI port is not always the
 * frontend port + 1000 (`--ui-port` says otherwise, `--headless` has none), so it is read from what
 * started the server: goalrun's dev-server record under GOALRUN_HOME, else the command line of the
 * `temporal server start-dev` process that serves the address. A remote server's UI is unknown.
 */
import { readdirSync } from 'node:fs';
import { isDevServerCommand, liveDevServerRecord, readCommandLine } from './dev-server-record';
import { isLocalHost, parseTemporalAddress } from './temporal-address';

export {
  DEV_SERVER_RECORD_FILE,
  type DevServerRecord,
  isDevServerCommand,
  removeDevServerRecord,
  writeDevServerRecord,
} from './dev-server-record';

// The dev server's own defaults (temporal CLI `server start-dev --help`).
const DEV_SERVER_DEFAULT_PORT = 7233;
const DEV_SERVER_UI_PORT_OFFSET = 1000;
const WILDCARD_IPS = new Set(['0.0.0.0', '::', '']);

/** The settings {@link webUiUrl} needs (a subset of worker/settings.ts `Settings`). */
export interface WebUiSettings {
  temporalAddress: string;
  namespace: string;
  home: string;
}

/** Options for tests: where the process table lives (`/proc` on Linux). */
export interface WebUiLookupOptions {
  procDir?: string;
}

/**
 * The Web UI address of a workflow, or null when no UI is known: a remote server, a headless dev
 * server, or a local server goalrun cannot identify (a wrong link is worse than none).
 */
export function webUiUrl(
  settings: WebUiSettings,
  workflowId: string,
  options: WebUiLookupOptions = {},
): string | null {
  const base = webUiBase(settings, options);
  if (!base) return null;
  return `${base}/namespaces/${encodeURIComponent(settings.namespace)}/workflows/${encodeURIComponent(workflowId)}`;
}

/** The Web UI's base URL (no trailing slash) for the configured Temporal address, or null. */
export function webUiBase(settings: WebUiSettings, options: WebUiLookupOptions = {}): string | null {
  const { host, port } = parseTemporalAddress(settings.temporalAddress);
  if (!isLocalHost(host)) return null;
  const procDir = options.procDir ?? '/proc';
  const ui = uiFromRecord(settings.home, port, procDir) ?? uiFromProcessTable(port, procDir);
  if (!ui || ui.port === null) return null;
  const uiHost = ui.ip && !WILDCARD_IPS.has(ui.ip) ? ui.ip : host;
  const hostPart = uiHost.includes(':') ? `[${uiHost}]` : uiHost;
  return `http://${hostPart}:${ui.port}${ui.publicPath}`;
}

/** A dev server's UI as its starter configured it; `port` null means headless. */
interface UiEndpoint {
  port: number | null;
  ip?: string;
  /** `--ui-public-path` without its trailing slash ('' for the root). */
  publicPath: string;
}

function uiFromRecord(home: string, port: number, procDir: string): UiEndpoint | null {
  const record = liveDevServerRecord(home, port, procDir);
  return record ? { port: record.uiPort, publicPath: '' } : null;
}

function uiFromProcessTable(port: number, procDir: string): UiEndpoint | null {
  let entries: string[];
  try {
    entries = readdirSync(procDir);
  } catch {
    return null;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const argv = readCommandLine(procDir, Number(entry));
    if (!argv || !isDevServerCommand(argv)) continue;
    const ui = parseDevServerCommand(argv);
    if (ui.frontendPort === port) return ui;
  }
  return null;
}

/** The frontend port and UI settings of a `temporal server start-dev` command line. */
export function parseDevServerCommand(
  argv: readonly string[],
): UiEndpoint & { frontendPort: number; httpPort?: number } {
  const frontendPort = integerFlag(argv, ['--port', '-p']) ?? DEV_SERVER_DEFAULT_PORT;
  // Without --http-port the dev server picks a random port, which nothing outside it can know.
  const httpPort = integerFlag(argv, ['--http-port']);
  const headless = booleanFlag(argv, '--headless');
  const uiPort = integerFlag(argv, ['--ui-port']) ?? frontendPort + DEV_SERVER_UI_PORT_OFFSET;
  const publicPath = (flagValue(argv, ['--ui-public-path']) ?? '').replace(/\/+$/, '');
  return {
    frontendPort,
    port: headless ? null : uiPort,
    ip: flagValue(argv, ['--ui-ip']) ?? flagValue(argv, ['--ip']),
    publicPath: publicPath && !publicPath.startsWith('/') ? `/${publicPath}` : publicPath,
    ...(httpPort === undefined ? {} : { httpPort }),
  };
}

// pflag syntax: `--name value`, `--name=value`, `-p value`, `-p=value`, `-pvalue`; the last one wins.
function flagValue(argv: readonly string[], names: readonly string[]): string | undefined {
  let value: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    for (const name of names) {
      if (arg === name && i + 1 < argv.length) value = argv[i + 1];
      else if (arg.startsWith(`${name}=`)) value = arg.slice(name.length + 1);
      else if (name.length === 2 && !name.startsWith('--') && arg.startsWith(name) && arg.length > 2)
        value = arg.slice(2);
    }
  }
  return value;
}

function integerFlag(argv: readonly string[], names: readonly string[]): number | undefined {
  const raw = flagValue(argv, names);
  if (raw === undefined || !/^\d+$/.test(raw)) return undefined;
  return Number(raw);
}

function booleanFlag(argv: readonly string[], name: string): boolean {
  let value = false;
  for (const arg of argv) {
    if (arg === name) value = true;
    else if (arg.startsWith(`${name}=`)) value = arg.slice(name.length + 1) !== 'false';
  }
  return value;
}
