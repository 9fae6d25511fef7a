/**
 * Issue 29: goals on a real Temporal server whose frontend requires mTLS (certificates made with
 * openssl: a CA, the server's, one per goalrun process). Nothing reaches it in plain gRPC.
 *
 * - The compose split with profiles of one temporal.toml: a model worker (`--profile model`), a tool
 *   host with its own certificate (TEMPORAL_PROFILE=tools), and the CLI (`--profile cli`) that starts
 *   a goal and reads its status over the server's HTTPS API with the client certificate.
 * - A goal run by `goalrun run` (its worker in the same process) with only TEMPORAL_* variables, as
 *   any Temporal tool connects: no dev server is started for it.
 * - A client without a certificate, the CLI, a worker's start and doctor alike, is told the cause
 *   and the setting to fix.
 *
 * The server runs with the TLS settings of docker-compose.tls.yml (read from it), its certificates
 * made by scripts/make-tls-certs.sh, the script that file tells operators to run.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toolsQueueName } from '../../worker/roles';
import { cliEnv, killAndWait, runCli, scriptedModel, spawnCli, tempDir, waitFor } from '../support/cli';
import { adminSql, type ClusterServer, localPostgres, startClusterServer } from '../support/cluster-server';
import { makeClientCertificate, makeTestPki, type TestPki } from '../support/test-certificates';

/** Records the modules a CLI run loads (test/e2e/cli-module-graph.test.ts uses it too). */
const RECORDER = path.resolve(__dirname, '../support/module-recorder.cjs');
/** Ports of its own: the compose test's server uses 17_200, the versioning test's 17_400. */
const PORT_BASE = 17_300;
/** What the CLI says to a client that brings no certificate (worker/connection-errors.ts). */
const NO_CERTIFICATE =
  'the server requires a client certificate (mTLS), and none is configured; fix: set TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH';
const TERMINAL = ['completed', 'failed', 'blocked', 'cancelled', 'limit_reached'];

type Proc = ReturnType<typeof spawnCli>;

/** A goal of one bash call and a finish. */
function twoStepGoal(dir: string, marker: string): string {
  return scriptedModel(dir, [
    { toolCalls: [{ name: 'bash', args: { command: `echo ran > ${marker}` } }] },
    { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: `${marker} written` } }] },
  ]);
}

/** A temporal.toml profile that connects to the server with one client certificate. */
function profile(name: string, address: string, pki: TestPki, cert: { cert: string; key: string }): string {
  return `[profile.${name}]
address = "${address}"
namespace = "default"
[profile.${name}.tls]
client_cert_path = "${cert.cert}"
client_key_path = "${cert.key}"
server_ca_cert_path = "${pki.ca}"
`;
}

describe('goals on a Temporal server whose frontend requires mTLS', () => {
  const pid = process.pid;
  const dir = tempDir('secured-cluster');
  const database = `goalrun_secured_store_${pid}`;
  const root = path.join(dir, 'workspaces');
  const timings: Record<string, number> = {};
  let pki: TestPki;
  let server: ClusterServer;
  let base: NodeJS.ProcessEnv;
  let toml: string;
  const workers: Proc[] = [];

  beforeAll(async () => {
    const began = Date.now();
    pki = makeTestPki(path.join(dir, 'pki'));
    // docker-compose.tls.yml's server settings, with this test's certificates.
    server = await startClusterServer({
      dir,
      databasePrefix: `goalrun_secured_temporal_${pid}`,
      portBase: PORT_BASE,
      tls: {
        certDir: pki.dir,
        serverName: 'localhost',
        client: makeClientCertificate(pki, 'test-setup'),
      },
    });
    timings.serverReadyMs = Date.now() - began;
    const local = localPostgres();
    await adminSql(local.adminUrl, `DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
    await adminSql(local.adminUrl, `CREATE DATABASE ${database}`);
    const storeUrl = new URL(local.adminUrl);
    storeUrl.pathname = `/${database}`;

    toml = path.join(dir, 'temporal.toml');
    fs.writeFileSync(
      toml,
      [
        profile('model', server.address, pki, makeClientCertificate(pki, 'goalrun-model-worker')),
        profile('tools', server.address, pki, makeClientCertificate(pki, 'goalrun-tool-host')),
        profile('cli', server.address, pki, { cert: pki.clientCert, key: pki.clientKey }),
      ].join('\n'),
    );
    // Every process finds its Temporal in the profile it names: no TEMPORAL_ADDRESS anywhere.
    base = cliEnv({
      DATABASE_URL: storeUrl.toString(),
      TEMPORAL_CONFIG_FILE: toml,
      TEMPORAL_ADDRESS: undefined,
      TEMPORAL_NAMESPACE: undefined,
      GOALRUN_HOME: tempDir('secured-cli-home'),
    });
    fs.mkdirSync(root, { recursive: true });
  });

  afterAll(async () => {
    for (const worker of workers) await killAndWait(worker, 'SIGKILL');
    await server?.kill('SIGKILL');
    console.log(`secured cluster timings: ${JSON.stringify(timings)}`);
  });

  it('runs a goal through a model worker, a tool host and the CLI that each connect with their own profile', async () => {
    const began = Date.now();
    const model = spawnCli(['--profile', 'model', 'worker', '--role', 'model'], {
      ...base,
      GOALRUN_HOME: tempDir('secured-model'),
    });
    const tools = spawnCli(['worker', '--role', 'tools', '--workspace-root', root], {
      ...base,
      GOALRUN_HOME: tempDir('secured-tools'),
      TEMPORAL_PROFILE: 'tools',
    });
    workers.push(model, tools);
    for (const [worker, says] of [
      [model, 'model worker polling task queue'],
      [tools, 'tools worker polling'],
    ] as const) {
      await waitFor(
        `${says}:\n${worker.output()}`,
        () => worker.exitCode === null && worker.output().includes(says),
        60_000,
      );
      // It says how it connects, never with what.
      expect(worker.output()).toContain(`Temporal ${server.address} (mTLS)`);
    }
    timings.workersReadyMs = Date.now() - began;

    const workspace = path.join(root, 'split');
    fs.mkdirSync(workspace);
    const started = await runCli(
      [
        '--profile',
        'cli',
        'start',
        'write the marker',
        '--workspace',
        workspace,
        '--model',
        twoStepGoal(dir, 'split.txt'),
        '--tools-queue',
        toolsQueueName(root),
        '--json',
      ],
      base,
    );
    expect(started.code, started.stderr).toBe(0);
    const { sessionId } = JSON.parse(started.stdout);

    // Read over the server's HTTPS API with the client certificate: the gRPC address in the
    // environment (which wins over the profile's) answers nothing, so only HTTPS can answer.
    const httpsOnly = {
      ...base,
      TEMPORAL_PROFILE: 'cli',
      TEMPORAL_ADDRESS: '127.0.0.1:1',
      TEMPORAL_HTTP_ADDRESS: server.httpAddress,
    };
    const status = await waitFor(
      'the goal to end',
      async () => {
        const shown = await runCli(['status', sessionId, '--json'], httpsOnly);
        expect(shown.code, shown.stderr).toBe(0);
        const view = JSON.parse(shown.stdout);
        return TERMINAL.includes(view.status) ? view : undefined;
      },
      90_000,
      1_000,
    );
    expect(status.status).toBe('completed');
    expect(fs.readFileSync(path.join(workspace, 'split.txt'), 'utf8')).toBe('ran\n');
    // It was Temporal's HTTPS API that answered: the command never loaded the gRPC client.
    const record = path.join(dir, 'status-modules.txt');
    const recorded = await runCli(['status', sessionId, '--json'], {
      ...httpsOnly,
      NODE_OPTIONS: `--require ${RECORDER}`,
      GOALRUN_MODULE_RECORD: record,
    });
    expect(JSON.parse(recorded.stdout).status).toBe('completed');
    expect(fs.readFileSync(record, 'utf8')).not.toMatch(/node_modules[/\\]@temporalio[/\\]client[/\\]/);
    timings.splitGoalMs = Date.now() - began;
  });

  it('runs a goal with only TEMPORAL_* variables, starting no dev server', async () => {
    const began = Date.now();
    const home = tempDir('secured-run-home');
    const workspace = path.join(dir, 'run-ws');
    fs.mkdirSync(workspace);
    const env = {
      ...base,
      GOALRUN_HOME: home,
      // An empty temporal.toml: the variables alone say where and how.
      TEMPORAL_CONFIG_FILE: path.join(dir, 'empty.toml'),
      TEMPORAL_ADDRESS: server.address,
      TEMPORAL_NAMESPACE: 'default',
      TEMPORAL_TLS_CLIENT_CERT_PATH: pki.clientCert,
      TEMPORAL_TLS_CLIENT_KEY_PATH: pki.clientKey,
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: pki.ca,
      TEMPORAL_TLS_SERVER_NAME: 'localhost',
    };
    fs.writeFileSync(env.TEMPORAL_CONFIG_FILE, '');
    const result = await runCli(
      ['run', 'write the marker', '--workspace', workspace, '--model', twoStepGoal(dir, 'run.txt'), '--json'],
      env,
    );
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).status).toBe('completed');
    expect(fs.readFileSync(path.join(workspace, 'run.txt'), 'utf8')).toBe('ran\n');
    expect(result.stderr).not.toContain('dev server');
    expect(fs.existsSync(path.join(home, 'temporal-dev.pid'))).toBe(false);
    timings.runGoalMs = Date.now() - began;
  });

  it('tells a client without a certificate why, and which setting to fix: the CLI, a worker and doctor', async () => {
    const env = {
      ...base,
      GOALRUN_HOME: tempDir('secured-nocert'),
      TEMPORAL_ADDRESS: server.address,
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: pki.ca,
    };
    const list = await runCli(['list', '--json'], env);
    expect(list.code).toBe(2);
    expect(list.stderr).toContain(`cannot connect to Temporal at ${server.address}: ${NO_CERTIFICATE}`);

    const worker = await runCli(['worker', '--role', 'model'], env, 60_000);
    expect(worker.code).toBe(2);
    expect(worker.stderr).toContain(NO_CERTIFICATE);

    const doctor = await runCli(['doctor'], env);
    expect(doctor.code).toBe(1);
    expect(doctor.stdout).toMatch(
      new RegExp(
        `^ok +Temporal connection: address ${server.address} \\(TEMPORAL_ADDRESS\\); namespace default \\(default\\); TLS on, server CA ${pki.ca} \\(TEMPORAL_TLS_SERVER_CA_CERT_PATH\\), no client certificate; no API key$`,
        'm',
      ),
    );
    const doctorLine = doctor.stdout.split('\n').find((line) => /^missing +Temporal server: /.test(line));
    expect(doctorLine, doctor.stdout).toContain(NO_CERTIFICATE);

    // With the profile, doctor says where each setting came from and that the server answers.
    const good = await runCli(['--profile', 'cli', 'doctor'], {
      ...base,
      GOALRUN_HOME: tempDir('secured-doctor'),
    });
    expect(good.stdout).toContain(
      `Temporal connection: address ${server.address} (address of profile "cli" in ${toml}); namespace default (namespace of profile "cli" in ${toml}); TLS on, server CA ${pki.ca} (tls.server_ca_cert_path of profile "cli" in ${toml})`,
    );
    expect(good.stdout).toMatch(
      /^ok +Temporal server: answers at .* \(server 1\.30\.\d+\); namespace default exists$/m,
    );
  });
});
