/**
 * Issue 10: the light commands (`--help`, `status`, `list`, `tasks`, `policy`, `stats`) never load
 * the worker, a model provider or the AI SDK; where Temporal's HTTP API is known (TEMPORAL_HTTP_ADDRESS,
 * or a dev server goalrun started) they load only commander and pg: not the gRPC client, grpc-js,
 * the protobuf definitions or zod. Without one they fall back to the gRPC client, with the same
 * output. Asserted on the module graph of the built CLI (a preload records every module it loads),
 * not on time.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEV_SERVER_FILES, stopBackgroundDevServer } from '../../cli/dev-server';
import { runCli, scriptedModel, tempDir } from '../support/cli';
import { type GoalTestEnv, goalTestEnv } from '../support/goal-env';
import { findFreePort } from '../support/temporal-server';

const RECORDER = path.resolve(__dirname, '../support/module-recorder.cjs');
const DIST = `${path.sep}dist${path.sep}`;

/** What a light command must not load: the worker and everything only it needs. */
const FORBIDDEN: Array<[what: string, test: (file: string) => boolean]> = [
  [
    "the SDK's worker",
    (file) => /node_modules[/\\]@temporalio[/\\](worker|core-bridge|activity)[/\\]/.test(file),
  ],
  ['the AI SDK', (file) => /node_modules[/\\](ai|@ai-sdk[/\\][^/\\]+)[/\\]/.test(file)],
  ['webpack (the workflow bundler)', (file) => /node_modules[/\\]webpack[/\\]/.test(file)],
  ['puppeteer', (file) => /node_modules[/\\]puppeteer/.test(file)],
  ["goalrun's worker", (file) => file.includes(`${DIST}worker${path.sep}worker.js`)],
  ['the workflow bundle', (file) => file.includes('workflow-bundle')],
  ['the tools', (file) => file.includes(`${DIST}activities${path.sep}tools${path.sep}`)],
  ['an activity', (file) => /[/\\]dist[/\\]activities[/\\][^/\\]*(-activity|-activities)\.js$/.test(file)],
  [
    'a model provider',
    (file) =>
      file.includes(`${DIST}activities${path.sep}providers${path.sep}`) &&
      !/[/\\](spec|model-spec|scripted-file|types)\.js$/.test(file),
  ],
];

/** What the HTTP API spares a read-only command: the gRPC client and what only it (and zod) costs. */
const GRPC_AND_ZOD = ['@temporalio/client', '@grpc/grpc-js', '@temporalio/proto', 'zod'] as const;

/** The modules a CLI run loaded. */
async function modulesOf(
  t: GoalTestEnv,
  args: string[],
  extraEnv: Record<string, string | undefined> = {},
): Promise<{ code: number | null; stdout: string; stderr: string; modules: string[] }> {
  const record = path.join(tempDir('modules'), 'modules.txt');
  const env: NodeJS.ProcessEnv = {
    ...t.env,
    NODE_OPTIONS: `--require ${RECORDER}`,
    GOALRUN_MODULE_RECORD: record,
  };
  for (const [name, value] of Object.entries(extraEnv)) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  const result = await runCli(args, env, 120_000);
  expect(fs.existsSync(record), `no module record: ${result.stderr}`).toBe(true);
  return {
    code: result.code,
    stdout: result.stdout,
    stderr: result.stderr,
    modules: fs.readFileSync(record, 'utf8').split('\n'),
  };
}

function forbiddenIn(modules: string[]): string[] {
  return FORBIDDEN.flatMap(([what, test]) => {
    const hits = modules.filter(test);
    return hits.length > 0 ? [`${what}: ${hits.slice(0, 3).join(', ')}`] : [];
  });
}

const loads = (modules: string[], pkg: string) =>
  modules.some((file) => file.includes(`${path.sep}node_modules${path.sep}${pkg}${path.sep}`));

/** What a command said about the goal (for `list`, its own line: other test files add goals meanwhile). */
function answerOf(command: string, stdout: string, id: string): unknown {
  const json = JSON.parse(stdout);
  return command === 'list'
    ? (json as Array<{ sessionId: string }>).find((view) => view.sessionId === id)
    : json;
}

/** The packages of GRPC_AND_ZOD a run loaded. */
const grpcOrZodIn = (modules: string[]) => GRPC_AND_ZOD.filter((pkg) => loads(modules, pkg));

describe('the module graph of light CLI commands', () => {
  let t: GoalTestEnv;
  let sessionId: string;
  let runModules: string[];

  beforeAll(async () => {
    t = goalTestEnv('modules');
    const model = scriptedModel(t.home, [
      {
        toolCalls: [
          { name: 'todo-write', args: { todos: [{ id: 'a', content: 'look', status: 'completed' }] } },
        ],
      },
      { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'done' } }] },
    ]);
    const run = await modulesOf(t, [
      'run',
      'a small goal',
      '--workspace',
      t.workspace,
      '--model',
      model,
      '--json',
    ]);
    expect(run.code).toBe(0);
    runModules = run.modules;
    sessionId = JSON.parse(run.stdout).sessionId;
  });

  it('sees the worker where one runs (the recorder and the checks work)', () => {
    expect(forbiddenIn(runModules).join('\n')).toMatch(/goalrun's worker/);
    expect(forbiddenIn(runModules).join('\n')).toMatch(/the SDK's worker/);
  });

  it('--help loads commander and none of Temporal, pg or the worker', async () => {
    const { code, modules } = await modulesOf(t, ['--help']);
    expect(code).toBe(0);
    expect(loads(modules, 'commander')).toBe(true);
    expect(forbiddenIn(modules)).toEqual([]);
    expect(loads(modules, '@temporalio/client')).toBe(false);
    expect(loads(modules, 'pg')).toBe(false);
  });

  it('run --help (the goal options) stays as light', async () => {
    const { code, modules } = await modulesOf(t, ['run', '--help']);
    expect(code).toBe(0);
    expect(forbiddenIn(modules)).toEqual([]);
    expect(loads(modules, '@temporalio/client')).toBe(false);
  });

  it('schedule add --help (the goal options and the schedule help) stays as light', async () => {
    const { code, stdout, modules } = await modulesOf(t, ['schedule', 'add', '--help']);
    expect(code).toBe(0);
    expect(stdout).toContain('goalrun schedule add nightly --cron');
    expect(forbiddenIn(modules)).toEqual([]);
    expect(loads(modules, '@temporalio/client')).toBe(false);
  });

  for (const command of ['status', 'tasks', 'policy', 'stats'] as const) {
    it(`${command} <id> over the HTTP API loads pg, and neither the gRPC client, zod nor the worker`, async () => {
      expect(t.env.TEMPORAL_HTTP_ADDRESS).toBeTruthy();
      const { code, stderr, modules } = await modulesOf(t, [command, sessionId, '--json']);
      expect(code, stderr).toBe(0);
      expect(forbiddenIn(modules)).toEqual([]);
      expect(grpcOrZodIn(modules)).toEqual([]);
      expect(loads(modules, 'pg')).toBe(true);
    });
  }

  it('list over the HTTP API loads neither the gRPC client, zod, the worker nor a provider', async () => {
    const { code, stderr, modules } = await modulesOf(t, ['list', '--json']);
    expect(code, stderr).toBe(0);
    expect(forbiddenIn(modules)).toEqual([]);
    expect(grpcOrZodIn(modules)).toEqual([]);
  });

  for (const command of ['status', 'tasks', 'policy', 'stats', 'list'] as const) {
    it(`${command} falls back to the gRPC client, with the same answer, when no HTTP API is known or answers`, async () => {
      const args = command === 'list' ? ['list', '--json'] : [command, sessionId, '--json'];
      const overHttp = await modulesOf(t, args);
      const unknown = await modulesOf(t, args, { TEMPORAL_HTTP_ADDRESS: undefined });
      const closed = await modulesOf(t, args, { TEMPORAL_HTTP_ADDRESS: `127.0.0.1:${await findFreePort()}` });
      for (const run of [unknown, closed]) {
        expect(run.code, run.stderr).toBe(0);
        expect(loads(run.modules, '@temporalio/client')).toBe(true);
        expect(forbiddenIn(run.modules)).toEqual([]);
        expect(answerOf(command, run.stdout, sessionId)).toEqual(
          answerOf(command, overHttp.stdout, sessionId),
        );
      }
    });
  }
});

describe('the light commands on a dev server goalrun started', () => {
  let t: GoalTestEnv;
  let sessionId: string;

  beforeAll(async () => {
    const address = `127.0.0.1:${await findFreePort()}`;
    // No TEMPORAL_HTTP_ADDRESS: what the dev server recorded is all the CLI knows.
    t = goalTestEnv('modules-dev', { TEMPORAL_ADDRESS: address, TEMPORAL_HTTP_ADDRESS: undefined });
    // As after `goalrun dev` once: goalrun may start a server at this address by itself.
    fs.writeFileSync(path.join(t.home, DEV_SERVER_FILES.address), `${address}\n`);
    const model = scriptedModel(t.home, [
      { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'x' } }] },
    ]);
    const started = await runCli(
      ['start', 'nobody runs me', '--workspace', t.workspace, '--model', model, '--json'],
      t.env,
    );
    expect(started.code, started.stderr).toBe(0);
    expect(started.stderr).toContain('started a local dev server');
    sessionId = JSON.parse(started.stdout).sessionId;
  });

  afterAll(async () => {
    if (t) await stopBackgroundDevServer(t.home);
  });

  it('status finds the HTTP API in the dev-server record and shows the goal waiting for a worker', async () => {
    const { code, stdout, stderr, modules } = await modulesOf(t, ['status', sessionId, '--json']);
    expect(code, stderr).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({
      sessionId,
      status: 'waiting_for_worker',
      taskQueue: t.taskQueue,
    });
    expect(grpcOrZodIn(modules)).toEqual([]);
    expect(forbiddenIn(modules)).toEqual([]);
  });

  for (const command of ['tasks', 'policy', 'stats'] as const) {
    it(`${command} says it waits for a worker, over the HTTP API`, async () => {
      const { code, stdout, stderr, modules } = await modulesOf(t, [command, sessionId]);
      expect(code, stderr).toBe(0);
      expect(stdout).toContain(`goal ${sessionId} is waiting for a worker`);
      expect(stderr).toContain(`no worker is polling task queue ${t.taskQueue}`);
      expect(grpcOrZodIn(modules)).toEqual([]);
    });
  }
});
