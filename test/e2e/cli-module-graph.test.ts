/**
 * Issue 10: the light commands (`--help`, `status`, `list`, `tasks`, `policy`, `stats`) load only
 * commander, the Temporal client and pg, never the worker, a model provider or the AI SDK. Asserted
 * on the module graph of the built CLI (a preload records every module it loads), not on time.
 */
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli, scriptedModel, tempDir } from '../support/cli';
import { type GoalTestEnv, goalTestEnv } from '../support/goal-env';

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
      !/[/\\](spec|scripted-file|types)\.js$/.test(file),
  ],
];

/** The modules a CLI run loaded. */
async function modulesOf(
  t: GoalTestEnv,
  args: string[],
): Promise<{ code: number | null; stdout: string; modules: string[] }> {
  const record = path.join(tempDir('modules'), 'modules.txt');
  const env = { ...t.env, NODE_OPTIONS: `--require ${RECORDER}`, GOALRUN_MODULE_RECORD: record };
  const result = await runCli(args, env, 120_000);
  expect(fs.existsSync(record), `no module record: ${result.stderr}`).toBe(true);
  return { code: result.code, stdout: result.stdout, modules: fs.readFileSync(record, 'utf8').split('\n') };
}

function forbiddenIn(modules: string[]): string[] {
  return FORBIDDEN.flatMap(([what, test]) => {
    const hits = modules.filter(test);
    return hits.length > 0 ? [`${what}: ${hits.slice(0, 3).join(', ')}`] : [];
  });
}

const loads = (modules: string[], pkg: string) =>
  modules.some((file) => file.includes(`${path.sep}node_modules${path.sep}${pkg}${path.sep}`));

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

  for (const command of ['status', 'tasks', 'policy', 'stats'] as const) {
    it(`${command} <id> loads the Temporal client and pg, and not the worker or a provider`, async () => {
      const { code, modules } = await modulesOf(t, [command, sessionId, '--json']);
      expect(code).toBe(0);
      expect(forbiddenIn(modules)).toEqual([]);
      expect(loads(modules, '@temporalio/client')).toBe(true);
      expect(loads(modules, 'pg')).toBe(true);
    });
  }

  it('list loads neither the worker nor a provider', async () => {
    const { code, modules } = await modulesOf(t, ['list', '--json']);
    expect(code).toBe(0);
    expect(forbiddenIn(modules)).toEqual([]);
  });
});
