/**
 * Issue 28 §4, a worktree per goal: two goals started at once with `--worktree` in one repository
 * each commit on their own branch (`goalrun/<name>`), inside the sandbox, and the main checkout is
 * untouched. `clean` keeps a worktree whose branch holds commits on no other branch, and removes the
 * worktree and branch of a goal that made none. A directory that is not a repository is refused.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workflowIdOf } from '../../core/workflow-names';
import { killAndWait, runCli, spawnCli } from '../support/cli';
import { goalTestEnv } from '../support/goal-env';
import { goalArgs } from '../support/goal-steps';
import {
  type OpenAITestServer,
  promptText,
  requestStep,
  startOpenAITestServer,
} from '../support/openai-test-server';

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=Test', ...args], {
    cwd,
    encoding: 'utf8',
  }).trim();

/** The goal's bash: write a file of its own and commit it on the goal's branch. */
const commitCommand = (file: string) =>
  `echo ${file} > ${file} && git add ${file} && git -c user.email=m@example.com -c user.name=Model commit -qm "add ${file}" && git rev-parse --abbrev-ref HEAD; echo planted > "$(git rev-parse --git-common-dir)/hooks/post-checkout"; git config --local core.fsmonitor "touch /tmp/pwned"; true`;

describe('a worktree per goal', () => {
  let server: OpenAITestServer;
  beforeAll(async () => {
    server = await startOpenAITestServer({
      fallback: async (body) => {
        const prompt = promptText(body);
        const file = /write (\w+\.txt)/.exec(prompt)?.[1];
        if (file && requestStep(body) === 1)
          return { toolCalls: [{ name: 'bash', args: { command: commitCommand(file) } }] };
        return { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'done' } }] };
      },
    });
  });
  afterAll(async () => server?.close());

  it('two goals in one repository commit on their own branches; clean keeps work and removes the rest', {
    timeout: 300_000,
  }, async () => {
    const t = goalTestEnv('goal-worktree', { OPENAI_API_KEY: 'sk-test' });
    git(t.workspace, 'init', '-q', '-b', 'main');
    fs.writeFileSync(path.join(t.workspace, 'README'), 'the project\n');
    git(t.workspace, 'add', 'README');
    git(t.workspace, 'commit', '-qm', 'start');
    const worker = spawnCli(['worker'], t.env);
    try {
      const start = (name: string, objective: string) =>
        runCli(goalArgs('start', objective, t, server, ['--worktree', '--name', name, '--json']), t.env);
      const [a, b] = await Promise.all([start('alpha', 'write alpha.txt'), start('beta', 'write beta.txt')]);
      expect(a.code, a.stderr).toBe(0);
      expect(b.code, b.stderr).toBe(0);
      expect(a.stderr).toContain('on branch goalrun/alpha');
      const ids = [JSON.parse(a.stdout).sessionId, JSON.parse(b.stdout).sessionId];
      for (const id of ids) {
        const done = await runCli(['watch', id, '--json'], t.env, 180_000);
        expect(done.code, done.stderr).toBe(0);
        expect(JSON.parse(done.stdout)).toMatchObject({ status: 'completed' });
      }
      const status = JSON.parse((await runCli(['status', ids[0], '--json'], t.env)).stdout);
      expect(status.worktree).toMatchObject({ branch: 'goalrun/alpha' });
      expect(status.worktree.path.startsWith(path.join(t.home, 'worktrees'))).toBe(true);
      expect((await runCli(['status', ids[0]], t.env)).stdout).toContain('worktree   branch goalrun/alpha');

      // Each branch holds its own file, committed by the model in its sandbox; the main checkout is untouched.
      expect(git(t.workspace, 'log', '--format=%s', 'goalrun/alpha')).toBe('add alpha.txt\nstart');
      expect(git(t.workspace, 'log', '--format=%s', 'goalrun/beta')).toBe('add beta.txt\nstart');
      expect(git(t.workspace, 'ls-tree', '--name-only', 'goalrun/alpha')).toBe('README\nalpha.txt');
      expect(git(t.workspace, 'status', '--porcelain')).toBe('');
      expect(git(t.workspace, 'log', '--format=%s', 'main')).toBe('start');
      expect(fs.readdirSync(t.workspace).sort()).toEqual(['.git', 'README']);
      // What runs code in the repository stayed read-only to the model: no hook planted, no config changed.
      expect(fs.existsSync(path.join(t.workspace, '.git', 'hooks', 'post-checkout'))).toBe(false);
      expect(fs.readFileSync(path.join(t.workspace, '.git', 'config'), 'utf8')).not.toContain('fsmonitor');

      // A goal that committed nothing: clean removes its worktree and branch; the two with commits are kept.
      const idle = await runCli(
        goalArgs('start', 'nothing to do', t, server, ['--worktree', '--json']),
        t.env,
      );
      expect(idle.code, idle.stderr).toBe(0);
      const idleId = JSON.parse(idle.stdout).sessionId;
      expect((await runCli(['watch', idleId, '--json'], t.env, 180_000)).code).toBe(0);
      const idleTree = JSON.parse((await runCli(['status', idleId, '--json'], t.env)).stdout).worktree;
      expect(fs.existsSync(idleTree.path)).toBe(true);

      // clean never takes a session whose workflow still runs: wait for the three to close.
      const connection = await Connection.connect({ address: t.temporalAddress });
      try {
        const client = new Client({ connection });
        for (const id of [...ids, idleId]) await client.workflow.getHandle(workflowIdOf(id)).result();
      } finally {
        await connection.close();
      }
      const cleaned = await runCli(
        ['clean', '--project', t.workspace, '--keep', '0', '--include-named', '--yes'],
        t.env,
      );
      expect(cleaned.code, cleaned.stderr).toBe(0);
      expect(cleaned.stderr).toMatch(/kept the worktree .*goalrun\/alpha has 1 commit on no other branch/);
      expect(cleaned.stderr).toMatch(/kept the worktree .*goalrun\/beta has 1 commit on no other branch/);
      expect(cleaned.stdout).toContain('removed 3 sessions');
      expect(cleaned.stderr).not.toContain(idleTree.path);
      expect(fs.existsSync(idleTree.path)).toBe(false);
      expect(git(t.workspace, 'branch', '--list', idleTree.branch)).toBe('');
      expect(git(t.workspace, 'branch', '--list', 'goalrun/alpha')).toContain('goalrun/alpha');
    } finally {
      await killAndWait(worker, 'SIGTERM');
    }
  });

  it('refuses a workspace that is not in a git repository, with the reason', async () => {
    const t = goalTestEnv('goal-worktree-none', { OPENAI_API_KEY: 'sk-test' });
    const refused = await runCli(goalArgs('start', 'write x.txt', t, server, ['--worktree']), t.env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--worktree needs a git repository');
  });
});
