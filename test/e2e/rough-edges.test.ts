/**
 * Issue 7, acceptance 7: one test for each "rough" item the CLI owns: resume of a completed goal,
 * resume at a limit, the model card note, the worker log, wording, short ids and --last, the docs,
 * the defaults in --help, and a mistyped TEMPORAL_ADDRESS. (The kept-progress item is the workflow's.)
 *
 * Two tests need the lead's workflow changes and say so: the resume message reaching the model, and
 * the no-card note leaving the workflow's recent list.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configSchema } from '../../worker/config-schema';
import { killAndWait, runCli, runCliIn, scriptedModel, spawnCli, tempDir, waitFor } from '../support/cli';
import { goalTestEnv } from '../support/goal-env';
import { type OpenAITestServer, startOpenAITestServer } from '../support/openai-test-server';
import { findFreePort } from '../support/temporal-server';

const REPO = path.resolve(__dirname, '../..');
const finish = (summary: string) => ({
  toolCalls: [{ name: 'finish', args: { status: 'complete', summary } }],
});
const busy = (n: number) => ({ toolCalls: [{ name: 'bash', args: { command: `echo ${n} >> log.txt` } }] });

describe('resume of a completed goal', () => {
  let server: OpenAITestServer;
  beforeAll(async () => {
    server = await startOpenAITestServer();
  });
  afterAll(async () => server?.close());

  it('refuses without --message or --force, naming both', async () => {
    const t = goalTestEnv('donegoal');
    const run = await runCli(
      [
        'run',
        'finish at once',
        '--workspace',
        t.workspace,
        '--model',
        scriptedModel(t.home, [finish('done')]),
        '--json',
      ],
      t.env,
    );
    expect(run.code, run.stderr).toBe(0);
    const { sessionId } = JSON.parse(run.stdout);
    const refused = await runCli(['resume', sessionId], t.env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`goal ${sessionId} already completed`);
    expect(refused.stderr).toContain(`goalrun resume ${sessionId} --message "<what to do next>"`);
    expect(refused.stderr).toContain('--force');
    const empty = await runCli(['resume', sessionId, '--message', '  '], t.env);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('--message is empty');
  });

  it('with --message, delivers the new instruction to the model (needs the workflow to deliver resumeMessage)', async () => {
    const t = goalTestEnv('donemsg');
    const base = ['--model', 'openai-compatible:test-model', '--base-url', server.url];
    server.enqueue(finish('first part done'));
    const run = await runCli(
      ['run', 'do the first part', '--workspace', t.workspace, ...base, '--json'],
      t.env,
    );
    expect(run.code, run.stderr).toBe(0);
    const { sessionId } = JSON.parse(run.stdout);
    const before = server.requests.length;
    server.enqueue(finish('second part done'));
    const resumed = await runCli(
      ['resume', sessionId, '--message', 'now write SECOND.txt too', '--json'],
      t.env,
    );
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ status: 'completed', steps: 2 });
    // The first request of the new execution ends with the instruction, as a steering message.
    const shown = server.requests[before].body.messages ?? [];
    expect(shown.at(-1)).toMatchObject({ role: 'user' });
    expect(JSON.stringify(shown.at(-1)?.content)).toContain(
      '[steering from resume] now write SECOND.txt too',
    );
    // Stored once, as kind steering, first thing after the resume note and before any step.
    const transcript = await runCli(['transcript', sessionId, '--format', 'jsonl'], t.env);
    expect(transcript.code, transcript.stderr).toBe(0);
    const lines = transcript.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    const note = lines.findIndex((line) => line.kind === 'resume');
    expect(note).toBeGreaterThan(0);
    expect(lines.slice(0, note).some((line) => JSON.stringify(line.content).includes('SECOND.txt'))).toBe(
      false,
    );
    expect(lines[note + 1]).toMatchObject({ role: 'user', kind: 'steering', meta: { from: 'resume' } });
    expect(JSON.stringify(lines[note + 1].content)).toContain('now write SECOND.txt too');
    expect(lines[note + 2]).toMatchObject({ role: 'assistant' });
    expect(
      lines.filter((line) => JSON.stringify(line.content).includes('now write SECOND.txt')),
    ).toHaveLength(1);
  });
});

describe('resume of a goal at a limit', () => {
  it('names the limit and the flag that raises it, never a plain resume that stops again', async () => {
    const t = goalTestEnv('atlimit');
    const model = scriptedModel(t.home, [busy(1), busy(2), finish('three steps')]);
    const run = await runCli(
      ['run', 'keep going', '--workspace', t.workspace, '--model', model, '--max-steps', '1'],
      t.env,
    );
    expect(run.code).toBe(4);
    const sessionId = /^goal \S+ \(session (\S+)\)$/m.exec(run.stdout)?.[1];
    expect(sessionId).toBeTruthy();
    expect(run.stdout).toContain(`to go on, raise the step limit: goalrun resume ${sessionId} --max-steps 2`);
    expect(run.stdout).not.toContain(`resume with: goalrun resume ${sessionId}\n`);

    const refused = await runCli(['resume', sessionId!], t.env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(
      `goal ${sessionId} is at the step limit (1 step), so it would stop again at once`,
    );
    expect(refused.stderr).toContain(`goalrun resume ${sessionId} --max-steps 2`);

    const raised = await runCli(['resume', sessionId!, '--max-steps', '5', '--json'], t.env);
    expect(raised.code, raised.stderr).toBe(0);
    expect(JSON.parse(raised.stdout)).toMatchObject({ status: 'completed', steps: 3 });
  });
});

describe('model cards', () => {
  let server: OpenAITestServer;
  beforeAll(async () => {
    server = await startOpenAITestServer();
  });
  afterAll(async () => server?.close());

  it('the scripted demo model has a card: no "no model card" anywhere', async () => {
    const t = goalTestEnv('democard');
    const run = await runCli(
      ['run', 'finish', '--workspace', t.workspace, '--model', scriptedModel(t.home, [finish('ok')])],
      t.env,
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout + run.stderr).not.toContain('no model card');
  });

  it('an unknown model is named once at start and in status', async () => {
    const t = goalTestEnv('nocard');
    server.enqueue(finish('ok'));
    const run = await runCli(
      [
        'run',
        'finish',
        '--workspace',
        t.workspace,
        '--model',
        'openai-compatible:mystery',
        '--base-url',
        server.url,
        '--json',
      ],
      t.env,
    );
    expect(run.code, run.stderr).toBe(0);
    const note = 'no model card for openai-compatible:mystery; using a conservative generic card';
    expect(run.stderr.split(note).length - 1).toBe(1);
    const { sessionId } = JSON.parse(run.stdout);
    const status = await runCli(['status', sessionId], t.env);
    expect(status.stdout).toMatch(new RegExp(`^note {7}${note}`, 'm'));
    // Said once: not again in the recent actions (needs the workflow to drop it from its recent list).
    expect(status.stdout.split(note).length - 1).toBe(1);
  });
});

describe('the worker log', () => {
  it('is one line per event at info, with every field at debug, and never a task token', async () => {
    for (const level of ['info', 'debug']) {
      const t = goalTestEnv(`log${level}`);
      const worker = spawnCli(['worker', '--log-level', level], t.env);
      try {
        await waitFor('the worker', () => worker.output().includes('polling task queue'));
        const model = scriptedModel(t.home, [busy(1), finish('logged')]);
        const started = await runCli(
          ['start', 'log me', '--workspace', t.workspace, '--model', model, '--json'],
          t.env,
        );
        const watched = await runCli(['watch', JSON.parse(started.stdout).sessionId, '--json'], t.env);
        expect(watched.code, watched.stderr).toBe(0);
      } finally {
        await killAndWait(worker, 'SIGTERM');
      }
      const lines = worker
        .output()
        .split('\n')
        .filter((line) => line && !line.startsWith('goalrun: '));
      expect(lines.length).toBeGreaterThan(2);
      for (const line of lines)
        expect(line).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z (DEBUG|INFO |WARN |ERROR|TRACE)/);
      expect(worker.output()).not.toMatch(/taskToken/i);
      if (level === 'debug') expect(worker.output()).toMatch(/ workflowId=goalrun-/);
      else expect(worker.output()).toMatch(/ workflow=goalrun-\S+ activity=\w+/);
    }
  });
});

describe('wording', () => {
  it('counts in the singular for one', async () => {
    const t = goalTestEnv('wording');
    const run = await runCli(
      ['run', 'one step', '--workspace', t.workspace, '--model', scriptedModel(t.home, [finish('one')])],
      t.env,
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/goal completed — 1 step, 1 iteration, /);
    const sessionId = /^goal \S+ \(session (\S+)\)$/m.exec(run.stdout)?.[1];
    const status = await runCli(['status', sessionId!], t.env);
    expect(status.stdout).toMatch(/^progress {3}iteration \d+, 1 step, /m);
    expect(status.stdout).not.toMatch(/\b1 (steps|iterations|minutes|requests)\b/);
  });
});

describe('ids', () => {
  it('take a unique prefix, reject an ambiguous one listing the candidates, and --last', async () => {
    const t = goalTestEnv('ids');
    const ids: string[] = [];
    for (const n of [1, 2]) {
      const run = await runCli(
        [
          'run',
          `goal ${n}`,
          '--workspace',
          t.workspace,
          '--model',
          scriptedModel(t.home, [finish(`goal ${n}`)]),
          '--json',
        ],
        t.env,
      );
      expect(run.code, run.stderr).toBe(0);
      ids.push(JSON.parse(run.stdout).sessionId);
    }
    // Both ids start with the workspace's hash: that prefix is ambiguous.
    const shared = ids[0].slice(0, 12);
    expect(ids[1].startsWith(shared)).toBe(true);
    const ambiguous = await runCli(['status', shared], t.env);
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.stderr).toContain(`the id prefix "${shared}" is ambiguous; it starts 2 goals:`);
    for (const id of ids) expect(ambiguous.stderr).toContain(`  ${id}`);

    // The shortest prefix that tells them apart.
    let length = 13;
    while (ids[0].slice(0, length) === ids[1].slice(0, length)) length++;
    const prefix = ids[1].slice(0, length);
    for (const command of ['status', 'tasks', 'stats', 'policy', 'watch']) {
      const shown = await runCli([command, prefix, '--json'], t.env);
      expect(shown.code, `${command}: ${shown.stderr}`).toBe(0);
      // tasks prints the task list and policy the window; the others name the goal.
      const expected = { tasks: '[', policy: '"windowTokens"' }[command] ?? ids[1];
      expect(shown.stdout, command).toContain(expected);
    }
    // cancel and resume resolve a prefix too: both reach the goal it names (here the older one,
    // which --last below cannot).
    const olderPrefix = ids[0].slice(0, length);
    const cancelByPrefix = await runCli(['cancel', olderPrefix], t.env);
    expect(cancelByPrefix.code, cancelByPrefix.stderr).toBe(0);
    expect(cancelByPrefix.stdout).toContain(`goal ${ids[0]} is not running (completed); nothing to cancel`);
    // A prefix reaches only the current project's sessions (issue 17): resume it from the workspace.
    const resumeByPrefix = await runCliIn(t.workspace, ['resume', olderPrefix], t.env);
    expect(resumeByPrefix.stderr).toContain(`goal ${ids[0]} already completed`);
    expect(resumeByPrefix.stderr).not.toContain('no goal with');
    const last = await runCliIn(t.workspace, ['status', '--last', '--json'], t.env);
    expect(last.code, last.stderr).toBe(0);
    expect(JSON.parse(last.stdout).sessionId).toBe(ids[1]);
    for (const command of ['tasks', 'stats', 'policy', 'watch']) {
      const shown = await runCliIn(t.workspace, [command, '--last', '--json'], t.env);
      expect(shown.code, `${command} --last: ${shown.stderr}`).toBe(0);
    }
    const cancel = await runCliIn(t.workspace, ['cancel', '--last'], t.env);
    expect(cancel.stdout).toContain(`goal ${ids[1]} is not running (completed); nothing to cancel`);
    const resume = await runCliIn(t.workspace, ['resume', '--last'], t.env);
    expect(resume.stderr).toContain(`goal ${ids[1]} already completed`);
    const nowhere = await runCliIn(tempDir('ids-elsewhere'), ['status', '--last'], t.env);
    expect(nowhere.code).toBe(2);
    expect(nowhere.stderr).toMatch(/no goal has run in .* yet/);
    const unknown = await runCli(['status', 'zzzz-nothing'], t.env);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('no goal with session or workflow id "zzzz-nothing"');
  });
});

describe('docs in the repo', () => {
  const configuration = fs.readFileSync(path.join(REPO, 'docs/configuration.md'), 'utf8');

  it('exist, and the README points to them instead of a shared folder', () => {
    const readme = fs.readFileSync(path.join(REPO, 'README.md'), 'utf8');
    expect(readme).not.toMatch(/shared folder/);
    for (const doc of ['architecture.md', 'configuration.md', 'compaction.md']) {
      expect(fs.existsSync(path.join(REPO, 'docs', doc))).toBe(true);
      expect(readme).toContain(`docs/${doc}`);
    }
  });

  it('name every config key, environment variable and flag', async () => {
    for (const key of Object.keys(configSchema().shape)) expect(configuration, key).toContain(`\`${key}\``);
    for (const variable of [
      'GOALRUN_HOME',
      'TEMPORAL_ADDRESS',
      'TEMPORAL_NAMESPACE',
      'GOALRUN_TASK_QUEUE',
      'DATABASE_URL',
      'GOALRUN_MODEL',
      'OPENAI_API_KEY',
      'OPENAI_BASE_URL',
      'ANTHROPIC_API_KEY',
      'OLLAMA_BASE_URL',
      'TEMPORAL_CLI_PATH',
      'GOALRUN_CACHE_DIR',
      'GOALRUN_DEBUG',
    ]) {
      expect(configuration, variable).toContain(`\`${variable}\``);
    }
    const env = { ...process.env, GOALRUN_HOME: tempDir('help-home') };
    for (const command of [
      'run',
      'start',
      'status',
      'list',
      'watch',
      'cancel',
      'resume',
      'tasks',
      'compact',
      'policy',
      'stats',
      'worker',
      'demo',
    ]) {
      const help = await runCli([command, '--help'], env);
      const flags = [...help.stdout.matchAll(/(?:^|\s)(--[a-z][a-z-]*)/g)].map((match) => match[1]);
      for (const flag of flags.filter((each) => each !== '--help'))
        expect(configuration, `${command} ${flag}`).toContain(flag);
    }
  });
});

describe('--help of run and start', () => {
  it('shows the default of each limit and the default model', async () => {
    const env = { ...process.env, GOALRUN_HOME: tempDir('help') };
    for (const command of ['run', 'start']) {
      const help = (await runCli([command, '--help'], env)).stdout.replace(/\s+/g, ' ');
      expect(help).toMatch(/--max-iterations <n> .*default: 50/);
      expect(help).toMatch(/--max-steps <n> .*default: 500/);
      expect(help).toMatch(/--max-minutes <n> .*default: 240/);
      expect(help).toContain('default: openai:gpt-4o-mini');
    }
  });
});

describe('a mistyped TEMPORAL_ADDRESS', () => {
  it('starts no dev server of its own and says that nothing answers there', async () => {
    const home = tempDir('typo-home');
    const workspace = tempDir('typo-ws');
    const address = `127.0.0.1:${await findFreePort()}`;
    const env = { ...goalTestEnv('typo').env, GOALRUN_HOME: home, TEMPORAL_ADDRESS: address };
    const result = await runCli(
      ['start', 'x', '--workspace', workspace, '--model', scriptedModel(home, [finish('x')])],
      env,
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`nothing answers at ${address} (TEMPORAL_ADDRESS)`);
    expect(result.stderr).toContain('goalrun starts a dev server by itself only at localhost:7233');
    expect(result.stderr).not.toContain('started a local dev server');
    expect(fs.existsSync(path.join(home, 'temporal-dev.pid'))).toBe(false);
  });
});
