#!/usr/bin/env node
/**
 * bench-cli: how fast the CLI's light commands start, next to what they cannot beat.
 *
 *   npm run bench:cli -- [--repeat 7]
 *
 * Starts its own headless Temporal dev server and a throwaway database, runs one small scripted
 * goal with the built CLI, then times --repeat runs of each, interleaved:
 *
 *   node -e 0                          (Node's own start)
 *   goalrun --help
 *   goalrun status <id>                over Temporal's HTTP API (TEMPORAL_HTTP_ADDRESS), as on a dev
 *                                      server goalrun started
 *   goalrun status <id> over gRPC      no HTTP API known: the gRPC client, as for any other server
 *   temporal workflow describe -w <id> (the Go CLI against the same server)
 *   a minimal Node script that loads @temporalio/client and describes the workflow (the floor of
 *   any Node CLI that uses the Temporal client)
 *
 * and prints median (min–max) wall times, the ratios of the issue (status vs describe, --help vs
 * node -e 0), and how many modules --help and status (both ways) load. It asserts nothing.
 */
'use strict';

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const { benchArgs, usageError } = require('./bench/args');
const { createDatabase, DIST, fmt, fromDist, median, onCleanup, ROOT, runMain, spread, startTemporalServer } =
  require('./bench/support');

const RECORDER = path.join(ROOT, 'test/support/module-recorder.cjs');

function run(command, args, env) {
  const started = performance.now();
  const result = spawnSync(command, args, { env, encoding: 'utf8' });
  const ms = performance.now() - started;
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(' ')} exited ${result.status}: ${result.stderr}`);
  }
  return { ms, stdout: result.stdout };
}

async function main() {
  const { values } = benchArgs(__filename, { options: { repeat: { type: 'string', default: '7' } } });
  const repeat = Number(values.repeat);
  if (!Number.isInteger(repeat) || repeat < 1) throw usageError('--repeat must be a positive integer');
  const { requireTemporalBinary } = fromDist('cli/temporal-binary.js');
  const temporal = requireTemporalBinary();

  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'goalrun-bench-cli-'));
  onCleanup('remove temp dir', () => fs.rmSync(tmp, { recursive: true, force: true }));
  const server = await startTemporalServer();
  const db = await createDatabase();
  const grpcEnv = {
    ...process.env,
    GOALRUN_HOME: tmp,
    DATABASE_URL: db.url,
    TEMPORAL_ADDRESS: server.address,
    GOALRUN_TASK_QUEUE: 'bench-cli',
  };
  delete grpcEnv.TEMPORAL_HTTP_ADDRESS;
  const env = { ...grpcEnv, TEMPORAL_HTTP_ADDRESS: server.httpAddress };
  const cli = path.join(DIST, 'cli/main.js');
  const script = path.join(tmp, 'turns.json');
  fs.writeFileSync(
    script,
    JSON.stringify({
      turns: [
        { toolCalls: [{ name: 'bash', args: { command: 'echo hi' } }] },
        { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'done' } }] },
      ],
    }),
  );
  const goal = JSON.parse(
    run(
      process.execPath,
      [cli, 'run', 'say hi', '--workspace', tmp, '--model', `scripted:${script}`, '--json'],
      env,
    ).stdout,
  );
  const describeScript = path.join(tmp, 'describe.js');
  fs.writeFileSync(
    describeScript,
    `const { Client, Connection } = require(${JSON.stringify(require.resolve('@temporalio/client'))});
(async () => {
  const connection = await Connection.connect({ address: ${JSON.stringify(server.address)} });
  const d = await new Client({ connection }).workflow.getHandle(${JSON.stringify(goal.workflowId)}).describe();
  console.log(d.status.name);
  await connection.close();
})();`,
  );

  const cases = {
    'node -e 0': () => run(process.execPath, ['-e', '0'], env),
    'goalrun --help': () => run(process.execPath, [cli, '--help'], env),
    'goalrun status <id>': () => run(process.execPath, [cli, 'status', goal.sessionId], env),
    'goalrun status <id> over gRPC': () => run(process.execPath, [cli, 'status', goal.sessionId], grpcEnv),
    'temporal workflow describe': () =>
      run(temporal, ['workflow', 'describe', '--address', server.address, '-w', goal.workflowId], env),
    'node + @temporalio/client describe': () => run(process.execPath, [describeScript], env),
  };
  const times = Object.fromEntries(Object.keys(cases).map((name) => [name, []]));
  for (const fn of Object.values(cases)) fn(); // warm the file cache
  for (let i = 0; i < repeat; i++) {
    for (const [name, fn] of Object.entries(cases)) times[name].push(fn().ms);
  }

  const modules = (args, runEnv = env) => {
    const record = path.join(tmp, 'modules.txt');
    run(process.execPath, ['--require', RECORDER, cli, ...args], {
      ...runEnv,
      GOALRUN_MODULE_RECORD: record,
    });
    return fs.readFileSync(record, 'utf8').split('\n').length;
  };

  console.log(`\n${repeat} runs each, interleaved; wall ms, median (min–max); ${os.cpus().length} CPUs`);
  for (const [name, list] of Object.entries(times)) console.log(`  ${name.padEnd(36)} ${spread(list, 0)}`);
  const ratio = (a, b) => fmt(median(times[a]) / median(times[b]), 2);
  console.log(`goalrun --help / node -e 0:                    ${ratio('goalrun --help', 'node -e 0')}×`);
  console.log(
    `goalrun status / temporal workflow describe:   ${ratio('goalrun status <id>', 'temporal workflow describe')}×`,
  );
  console.log(
    `  the same over gRPC:                          ${ratio('goalrun status <id> over gRPC', 'temporal workflow describe')}×`,
  );
  console.log(
    `goalrun status / a bare @temporalio/client describe: ${ratio('goalrun status <id>', 'node + @temporalio/client describe')}×`,
  );
  console.log(
    `modules loaded: --help ${modules(['--help'])}, status ${modules(['status', goal.sessionId])}, ` +
      `status over gRPC ${modules(['status', goal.sessionId], grpcEnv)}`,
  );
}

runMain(main);
