/**
 * A real Temporal server (not the dev server) on the machine's PostgreSQL, as docker-compose.yml runs
 * it: the binaries of scripts/ensure-temporal-server.sh at the version compose pins, the databases
 * made by temporal/setup-schema.sh (the script compose's temporal-schema service runs), and the
 * dynamic config compose mounts (temporal/dynamicconfig/goalrun.yaml). Ports of its own, never 7233.
 */
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Connection, type ConnectionOptions } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import Long from 'long';
import pg from 'pg';
import { SEARCH_ATTRIBUTES } from '../../cli/temporal-address';
import { waitFor } from './cli';

const REPO = path.resolve(__dirname, '../..');
const LOOPBACK = '127.0.0.1';
/** The compose file's dynamic config, shared by the test's server. */
export const COMPOSE_DYNAMIC_CONFIG = path.join(REPO, 'temporal/dynamicconfig/goalrun.yaml');
const SETUP_SCHEMA = path.join(REPO, 'temporal/setup-schema.sh');
const ENSURE_SERVER = path.join(REPO, 'scripts/ensure-temporal-server.sh');
/** Base of the server's ports: frontend gRPC at +33, HTTP at +43, history +34, matching +35, worker +39. */
export const DEFAULT_PORT_BASE = 17_200;
const STARTUP_TIMEOUT_MS = 120_000;
const OUTPUT_TAIL_CHARS = 20_000;
const NAMESPACE = 'default';
const RETENTION_SECONDS = 24 * 3600;

/** Where PostgreSQL is, for the server and the schema tool (the machine's, trust auth, user root). */
export interface PgTarget {
  host: string;
  port: number;
  user: string;
  password: string;
}

/** The local PostgreSQL that TEST_DATABASE_URL (or the default) names. */
export function localPostgres(): PgTarget & { adminUrl: string } {
  const adminUrl = process.env.TEST_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test';
  const url = new URL(adminUrl);
  return {
    adminUrl,
    host: url.hostname,
    port: Number(url.port || 5432),
    user: decodeURIComponent(url.username || 'root'),
    password: decodeURIComponent(url.password),
  };
}

/** Runs SQL as the admin of the local PostgreSQL. */
export async function adminSql(
  adminUrl: string,
  sql: string,
  values: unknown[] = [],
): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return await client.query(sql, values);
  } finally {
    await client.end();
  }
}

/** Builds (once) or finds the server binaries; returns their directory. */
export function ensureServerBinaries(): string {
  return execFileSync('bash', [ENSURE_SERVER], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  }).trim();
}

/**
 * Frontend mTLS as docker-compose.tls.yml turns it on: the server gets the override's TEMPORAL_TLS_*
 * variables, its certificate paths moved to `certDir` (made by scripts/make-tls-certs.sh) and the
 * compose service's name `temporal` replaced by `serverName`.
 */
export interface ClusterTls {
  /** ca.pem, server.pem and server.key: the override's /etc/temporal/tls. */
  certDir: string;
  /** A name the server's certificate holds, in place of `temporal`. */
  serverName: string;
  /** The client certificate of the test's own connections (health, namespace setup). */
  client: { cert: string; key: string };
}

const COMPOSE_TLS_FILE = path.join(REPO, 'docker-compose.tls.yml');
const COMPOSE_CERT_DIR = '/etc/temporal/tls/';
const COMPOSE_SERVER_NAME = 'temporal';

/** The TEMPORAL_TLS_* variables docker-compose.tls.yml gives the `temporal` service, for this test's files. */
export function composeTlsVariables(tls: ClusterTls): Record<string, string> {
  const text = fs.readFileSync(COMPOSE_TLS_FILE, 'utf8');
  const service = /\n {2}temporal:\n([\s\S]*?)(?=\n {2}[a-z][\w-]*:\n)/.exec(text)?.[1] ?? '';
  const variables: Record<string, string> = {};
  for (const [, name, raw] of service.matchAll(/^ +(TEMPORAL_TLS_[A-Z0-9_]+): *"?([^"\n]*)"? *$/gm)) {
    const value = raw.trim();
    variables[name] = value.startsWith(COMPOSE_CERT_DIR)
      ? path.join(tls.certDir, value.slice(COMPOSE_CERT_DIR.length))
      : value === COMPOSE_SERVER_NAME
        ? tls.serverName
        : value;
  }
  return variables;
}

/** The variables {@link tlsConfig} renders, as the server image's config template reads them. */
const RENDERED_TLS_VARIABLES = new Set([
  'TEMPORAL_TLS_SERVER_CA_CERT',
  'TEMPORAL_TLS_SERVER_CERT',
  'TEMPORAL_TLS_SERVER_KEY',
  'TEMPORAL_TLS_REQUIRE_CLIENT_AUTH',
  'TEMPORAL_TLS_FRONTEND_CERT',
  'TEMPORAL_TLS_FRONTEND_KEY',
  'TEMPORAL_TLS_CLIENT1_CA_CERT',
  'TEMPORAL_TLS_CLIENT2_CA_CERT',
  'TEMPORAL_TLS_INTERNODE_SERVER_NAME',
  'TEMPORAL_TLS_FRONTEND_SERVER_NAME',
]);

/**
 * The `global.tls` section that the temporalio/server image's config template (the server module's
 * common/config/config_template_embedded.yaml) renders from these variables: internode TLS with the
 * server certificate, which the server's own worker also presents to the frontend; the frontend's
 * certificate and the CAs its clients must be signed by.
 */
function tlsConfig(variables: Record<string, string>): string {
  const unknown = Object.keys(variables).filter((name) => !RENDERED_TLS_VARIABLES.has(name));
  if (unknown.length > 0)
    throw new Error(`docker-compose.tls.yml sets ${unknown.join(', ')}: render it here too`);
  const v = (name: string) => JSON.stringify(variables[name] ?? '');
  const files = (...names: string[]) =>
    names
      .filter((name) => variables[name])
      .map((name) => `\n          - ${v(name)}`)
      .join('');
  return `
  tls:
    internode:
      server:
        requireClientAuth: ${variables.TEMPORAL_TLS_REQUIRE_CLIENT_AUTH === 'true'}
        certFile: ${v('TEMPORAL_TLS_SERVER_CERT')}
        keyFile: ${v('TEMPORAL_TLS_SERVER_KEY')}
        clientCaFiles:${files('TEMPORAL_TLS_SERVER_CA_CERT')}
      client:
        serverName: ${v('TEMPORAL_TLS_INTERNODE_SERVER_NAME')}
        rootCaFiles:${files('TEMPORAL_TLS_SERVER_CA_CERT')}
    frontend:
      server:
        requireClientAuth: ${variables.TEMPORAL_TLS_REQUIRE_CLIENT_AUTH === 'true'}
        certFile: ${v('TEMPORAL_TLS_FRONTEND_CERT')}
        keyFile: ${v('TEMPORAL_TLS_FRONTEND_KEY')}
        clientCaFiles:${files('TEMPORAL_TLS_CLIENT1_CA_CERT', 'TEMPORAL_TLS_CLIENT2_CA_CERT')}
      client:
        serverName: ${v('TEMPORAL_TLS_FRONTEND_SERVER_NAME')}
        rootCaFiles:${files('TEMPORAL_TLS_SERVER_CA_CERT')}`;
}

/** The server's config file (Temporal's development-postgres12.yaml, cut down, on our ports). */
export function serverConfig(options: {
  pg: PgTarget;
  databases: { main: string; visibility: string };
  portBase: number;
  dynamicConfigFile: string;
  tls?: ClusterTls;
}): string {
  const { pg: db, portBase } = options;
  const datastore = (name: string, maxConns: number) => `
    ${name === options.databases.main ? 'default' : 'visibility'}:
      sql:
        pluginName: postgres12
        databaseName: ${JSON.stringify(name)}
        connectAddr: "${db.host}:${db.port}"
        connectProtocol: tcp
        user: ${JSON.stringify(db.user)}
        password: ${JSON.stringify(db.password)}
        maxConns: ${maxConns}
        maxIdleConns: ${maxConns}
        maxConnLifetime: 1h`;
  const service = (name: string, offset: number, http = false) => `
  ${name}:
    rpc:
      grpcPort: ${portBase + offset}
      membershipPort: ${portBase + offset + 700}
      bindOnIP: ${LOOPBACK}${http ? `\n      httpPort: ${portBase + 43}` : ''}`;
  return `log:
  stdout: true
  level: warn
persistence:
  defaultStore: default
  visibilityStore: visibility
  numHistoryShards: 4
  datastores:${datastore(options.databases.main, 20)}${datastore(options.databases.visibility, 4)}
global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: ${LOOPBACK}${options.tls ? tlsConfig(composeTlsVariables(options.tls)) : ''}
services:${service('frontend', 33, true)}${service('history', 34)}${service('matching', 35)}${service('worker', 39)}
clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: active
  currentClusterName: active
  clusterInformation:
    active:
      enabled: true
      initialFailoverVersion: 1
      rpcName: frontend
      rpcAddress: ${LOOPBACK}:${portBase + 33}
dcRedirectionPolicy:
  policy: noop
dynamicConfigClient:
  filepath: ${JSON.stringify(options.dynamicConfigFile)}
  pollInterval: 10s
`;
}

/** Options of {@link startClusterServer}. */
export interface ClusterServerOptions {
  /** A directory of its own: the config files and the server's log go there. */
  dir: string;
  /** Prefix of the two databases (`<prefix>` and `<prefix>_visibility`), dropped and made anew. */
  databasePrefix: string;
  portBase?: number;
  /** Dynamic config keys added to the compose file's, as YAML text (`key:\n  - value: …`). */
  extraDynamicConfig?: string;
  /** Frontend mTLS; plain gRPC without it. */
  tls?: ClusterTls;
}

/** A real Temporal server process; restartable, as after a crash. */
export class ClusterServer {
  private child?: ChildProcess;
  private output = '';

  constructor(
    readonly binDir: string,
    readonly configDir: string,
    readonly portBase: number,
    /** The frontend's mTLS, when it has it. */
    readonly tls?: ClusterTls,
  ) {}

  /** What the test's own gRPC connections to the frontend take. */
  connectionOptions(): ConnectionOptions {
    if (!this.tls) return { address: this.address };
    return {
      address: this.address,
      tls: {
        serverNameOverride: this.tls.serverName,
        serverRootCACertificate: fs.readFileSync(path.join(this.tls.certDir, 'ca.pem')),
        clientCertPair: {
          crt: fs.readFileSync(this.tls.client.cert),
          key: fs.readFileSync(this.tls.client.key),
        },
      },
    };
  }

  /** The frontend's gRPC address, what TEMPORAL_ADDRESS names. */
  get address(): string {
    return `${LOOPBACK}:${this.portBase + 33}`;
  }

  /** Temporal's HTTP API, what TEMPORAL_HTTP_ADDRESS names. */
  get httpAddress(): string {
    return `${LOOPBACK}:${this.portBase + 43}`;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** The last part of the server's log. */
  log(): string {
    return this.output;
  }

  /** Starts the server and waits until its frontend answers. */
  async start(): Promise<void> {
    const child = spawn(
      path.join(this.binDir, 'temporal-server'),
      ['--config-file', path.join(this.configDir, 'server.yaml'), '--allow-no-auth', 'start'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    this.child = child;
    const collect = (chunk: Buffer) => {
      this.output = (this.output + chunk.toString('utf8')).slice(-OUTPUT_TAIL_CHARS);
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    await waitFor(
      `the Temporal server at ${this.address} to serve`,
      async () => {
        if (child.exitCode !== null)
          throw new Error(`the server exited (${child.exitCode}):\n${this.output}`);
        return (await this.health()) === 'SERVING';
      },
      STARTUP_TIMEOUT_MS,
      500,
    );
  }

  /** The frontend's health, or undefined when it does not answer. */
  async health(): Promise<string | undefined> {
    let connection: Connection | undefined;
    try {
      connection = await Connection.connect({ ...this.connectionOptions(), connectTimeout: 2_000 });
      const response = await connection.healthService.check({});
      return response.status === 1 ? 'SERVING' : String(response.status);
    } catch {
      return undefined;
    } finally {
      await connection?.close();
    }
  }

  /** Sends a signal and waits for the process to exit. */
  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill(signal);
    await exited;
  }
}

/**
 * Builds or finds the binaries, makes the databases with temporal/setup-schema.sh, writes the config,
 * starts the server, and registers the `default` namespace with goalrun's search attributes (what
 * compose's temporal-setup service does).
 */
export async function startClusterServer(options: ClusterServerOptions): Promise<ClusterServer> {
  const binDir = ensureServerBinaries();
  const local = localPostgres();
  const databases = { main: options.databasePrefix, visibility: `${options.databasePrefix}_visibility` };
  for (const name of Object.values(databases)) {
    await adminSql(local.adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  }
  // The schema tool logs every statement: shown only when it fails.
  const setup = spawnSync('sh', [SETUP_SCHEMA], {
    encoding: 'utf8',
    env: {
      ...process.env,
      TEMPORAL_SQL_TOOL: path.join(binDir, 'temporal-sql-tool'),
      TEMPORAL_SCHEMA_DIR: path.join(binDir, 'schema/postgresql/v12'),
      TEMPORAL_DB: databases.main,
      TEMPORAL_VISIBILITY_DB: databases.visibility,
      SQL_HOST: local.host,
      SQL_PORT: String(local.port),
      SQL_USER: local.user,
      SQL_PASSWORD: local.password,
    },
  });
  if (setup.status !== 0) {
    throw new Error(`temporal/setup-schema.sh failed (${setup.status}):\n${setup.stdout}\n${setup.stderr}`);
  }

  const dynamicConfigFile = path.join(options.dir, 'dynamicconfig.yaml');
  fs.writeFileSync(
    dynamicConfigFile,
    `${fs.readFileSync(COMPOSE_DYNAMIC_CONFIG, 'utf8')}\n${options.extraDynamicConfig ?? ''}`,
  );
  const portBase = options.portBase ?? DEFAULT_PORT_BASE;
  fs.writeFileSync(
    path.join(options.dir, 'server.yaml'),
    serverConfig({ pg: local, databases, portBase, dynamicConfigFile, tls: options.tls }),
  );
  const server = new ClusterServer(binDir, options.dir, portBase, options.tls);
  await server.start();
  await registerNamespace(server.connectionOptions());
  return server;
}

/** The `default` namespace and goalrun's search attributes; both retried while the server warms up. */
async function registerNamespace(options: ConnectionOptions): Promise<void> {
  const connection = await Connection.connect(options);
  try {
    await waitFor('the default namespace', async () => {
      try {
        await connection.workflowService.registerNamespace({
          namespace: NAMESPACE,
          workflowExecutionRetentionPeriod: { seconds: Long.fromNumber(RETENTION_SECONDS) },
        });
      } catch (err) {
        if (!/already exists|AlreadyExists/i.test(String(err))) throw err;
      }
      return true;
    });
    const types = temporal.api.enums.v1.IndexedValueType;
    const searchAttributes = Object.fromEntries(
      Object.entries(SEARCH_ATTRIBUTES).map(([name, type]) => [
        name,
        types[`INDEXED_VALUE_TYPE_${type.toUpperCase()}` as keyof typeof types],
      ]),
    );
    // A new namespace takes a moment to reach every service's cache: retried until it is there.
    await waitFor(
      "goalrun's search attributes",
      async () => {
        try {
          await connection.operatorService.addSearchAttributes({ namespace: NAMESPACE, searchAttributes });
        } catch (err) {
          if (!/already exists/i.test(String(err))) throw err;
        }
        const listed = await connection.operatorService.listSearchAttributes({ namespace: NAMESPACE });
        return Object.keys(SEARCH_ATTRIBUTES).every((name) => name in (listed.customAttributes ?? {}));
      },
      60_000,
      1_000,
    );
  } finally {
    await connection.close();
  }
}
