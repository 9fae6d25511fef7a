/**
 * goalrun fork (issue 17 §3): a fork at a middle step has that step's files, bash edits included, in a
 * worktree of its own; the parent's files, branch and HEAD are unchanged; the fork resumes and
 * completes there. A workspace that is not a git repository forks the conversation only.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { SessionStore } from '../../store/types';
import { runCli, scriptedModel } from '../support/cli';
import { goalTestEnv, testStore } from '../support/goal-env';

// Step N answers turns[N-1]: the fork's resume runs step 3 and 4 again, in its own workspace.
const turns = [
  { toolCalls: [{ name: 'file-write', args: { path: 'notes.txt', content: 'v1\n' } }] },
  { toolCalls: [{ name: 'bash', args: { command: 'echo v2 > notes.txt' } }] },
  { toolCalls: [{ name: 'bash', args: { command: 'echo v3 > notes.txt && pwd > where.txt' } }] },
  { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'three versions' } }] },
];

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, stdio: 'pipe' }).toString().trim();
}

describe('goalrun fork', () => {
  let store: SessionStore | undefined;
  afterAll(async () => store?.close());

  it('rewinds a git workspace to the step, leaves the parent alone, and resumes on its own worktree', async () => {
    const t = goalTestEnv('fork-git');
    git(t.workspace, 'init', '-q', '-b', 'main');
    fs.writeFileSync(path.join(t.workspace, 'README'), 'project\n');
    git(t.workspace, 'add', '-A');
    git(t.workspace, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'first');
    const head = git(t.workspace, 'rev-parse', 'HEAD');
    const model = scriptedModel(t.home, turns);
    const ran = await runCli(
      ['run', 'write three versions', '--workspace', t.workspace, '--model', model, '--json'],
      t.env,
    );
    expect(ran.code, ran.stderr).toBe(0);
    const parent = JSON.parse(ran.stdout);
    expect(parent).toMatchObject({ status: 'completed', steps: 4 });
    const refs = git(t.workspace, 'for-each-ref', '--format=%(refname)', `refs/goalrun/${parent.sessionId}/`);
    expect(refs.split('\n')).toHaveLength(4);
    const statusBefore = git(t.workspace, 'status', '--porcelain');

    const forked = await runCli(['fork', parent.sessionId, '--at-step', '2', '--json'], t.env);
    expect(forked.code, forked.stderr).toBe(0);
    const fork = JSON.parse(forked.stdout);
    expect(fork).toMatchObject({ forkedFrom: parent.sessionId, atStep: 2, workflowId: expect.any(String) });
    expect(fork.workspace).not.toBe(t.workspace);
    expect(fs.readFileSync(path.join(fork.workspace, 'notes.txt'), 'utf8')).toBe('v2\n');
    expect(fs.existsSync(path.join(fork.workspace, 'where.txt'))).toBe(false);
    // The parent: files, branch, HEAD and status as they were.
    expect(fs.readFileSync(path.join(t.workspace, 'notes.txt'), 'utf8')).toBe('v3\n');
    expect(git(t.workspace, 'rev-parse', 'HEAD')).toBe(head);
    expect(git(t.workspace, 'symbolic-ref', 'HEAD')).toBe('refs/heads/main');
    expect(git(t.workspace, 'status', '--porcelain')).toBe(statusBefore);

    store = await testStore(t.databaseUrl);
    const copied = await store.listMessages(fork.sessionId);
    expect(copied.map((m) => m.key).filter((key) => key.startsWith('step:'))).toEqual([
      'step:1@1',
      'step:2@1',
    ]);
    expect((await store.listMessages(parent.sessionId)).length).toBeGreaterThan(copied.length);

    const resumed = await runCli(['resume', fork.sessionId, '--json'], t.env);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ status: 'completed', steps: 4 });
    expect(fs.readFileSync(path.join(fork.workspace, 'notes.txt'), 'utf8')).toBe('v3\n');
    expect(fs.realpathSync(fs.readFileSync(path.join(fork.workspace, 'where.txt'), 'utf8').trim())).toBe(
      fs.realpathSync(fork.workspace),
    );
    expect(fs.existsSync(path.join(t.workspace, 'where.txt'))).toBe(true);
    expect(git(t.workspace, 'rev-parse', 'HEAD')).toBe(head);
    expect(
      git(t.workspace, 'for-each-ref', '--format=%(refname)', `refs/goalrun/${fork.sessionId}/`),
    ).toContain(`refs/goalrun/${fork.sessionId}/3`);

    // clean removes the parent's snapshot refs with it; the fork (another project: its worktree) keeps its own.
    const cleaned = await runCli(['clean', '--project', t.workspace, '--keep', '0', '--yes'], t.env);
    expect(cleaned.code, cleaned.stderr).toBe(0);
    expect(cleaned.stdout).toContain('removed 1 session');
    expect(git(t.workspace, 'for-each-ref', '--format=%(refname)', `refs/goalrun/${parent.sessionId}/`)).toBe(
      '',
    );
    expect(
      git(t.workspace, 'for-each-ref', '--format=%(refname)', `refs/goalrun/${fork.sessionId}/`),
    ).not.toBe('');
    expect(git(t.workspace, 'rev-parse', 'HEAD')).toBe(head);
  }, 240_000);

  it('forks the conversation only in a folder that is not a git repository, and says so', async () => {
    const t = goalTestEnv('fork-plain');
    const model = scriptedModel(t.home, turns);
    const ran = await runCli(
      ['run', 'write three versions', '--workspace', t.workspace, '--model', model, '--json'],
      t.env,
    );
    expect(ran.code, ran.stderr).toBe(0);
    const parent = JSON.parse(ran.stdout);
    const forked = await runCli(['fork', parent.sessionId, '--at-step', '2'], t.env);
    expect(forked.code, forked.stderr).toBe(0);
    expect(forked.stdout).toMatch(/conversation only: .* is not a git repository/);
    // Short ids (issue 26 §10): the parent's and the fork's, then the fork's whole id.
    const [, parentShort, forkShort, forkId] =
      /^forked (\d+) at step 2: session (\d+) \((\S+)\)$/m.exec(forked.stdout) ?? [];
    expect(parent.sessionId.replace(/\D/g, '').endsWith(parentShort)).toBe(true);
    expect(forkId.replace(/\D/g, '').endsWith(forkShort)).toBe(true);
    // Its first resume says where it starts: not "(was cancelled)" nor "recovered N step(s)".
    const resumed = await runCli(['resume', forkShort], t.env);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain(`starting fork of ${parentShort} at step 2\n`);
    expect(resumed.stdout + resumed.stderr).not.toMatch(/was cancelled|recovered \d+ step/);
    expect(resumed.stdout).toMatch(/goal completed — 4 steps/);
    expect(JSON.parse((await runCli(['status', forkShort, '--json'], t.env)).stdout)).toMatchObject({
      status: 'completed',
      steps: 4,
    });
    // The run saved its own state: the next resume is of a session like any other.
    const forkStore = await testStore(t.databaseUrl);
    try {
      const row = await forkStore.getSession(forkId);
      expect(row?.goalState).not.toHaveProperty('forkedFrom');
      expect(row?.status).toBe('completed');
    } finally {
      await forkStore.close();
    }
    const bad = await runCli(['fork', parent.sessionId, '--at-step', '9'], t.env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/has no step 9/);
  }, 240_000);
});
