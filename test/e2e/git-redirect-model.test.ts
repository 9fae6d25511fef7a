/**
 * Issue 24 item 2: a scripted model that plants code through git's own files. In one bash call it
 * copies the repository to `.x/`, writes `.x/config` with `core.fsmonitor` = its script, and points
 * `.git/commondir` at `.x`; it also tries to write the alternates and `.git/info/`. The script would
 * write its environment (the worker's key included) outside the workspace. Neither the per-step
 * snapshots nor `goalrun fork` nor `goalrun clean` runs it: the snapshot is refused with a notice in
 * the transcript, the goal goes on, fork says why it shares the files. With `--sandbox off`, where
 * the model can write the alternates, they are refused the same way.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type StoredMessage, userTextOf } from '../../core/messages';
import type { SessionStore } from '../../store/types';
import { runCli, scriptedModel, tempDir } from '../support/cli';
import { goalTestEnv, testStore } from '../support/goal-env';

const WORKER_SECRET = 'sk-e2e-worker-secret-never-shown';

function git(cwd: string, ...args: string[]): string {
  // The test's own git never runs what the model planted.
  return execFileSync(
    'git',
    ['-c', 'core.fsmonitor=', '-c', 'core.hooksPath=/dev/null', '-C', cwd, ...args],
    {
      encoding: 'utf8',
    },
  );
}

function makeRepo(dir: string): void {
  git(dir, 'init', '-q', '-b', 'main');
  fs.writeFileSync(path.join(dir, 'README'), 'hi\n');
  git(dir, 'add', '.');
  git(dir, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'first');
}

const bash = (command: string) => ({ name: 'bash', args: { command } });

/** The text of the tool results, in order, and of the goalrun notices. */
function transcriptOf(messages: Array<{ message: StoredMessage }>): { results: string[]; notices: string[] } {
  const results = messages
    .filter(({ message }) => message.role === 'tool')
    .map(({ message }) =>
      String((message.content[0] as { output?: { value?: unknown } }).output?.value ?? ''),
    );
  const notices = messages
    .map(({ message }) => userTextOf(message))
    .filter((text) => text.startsWith('[goalrun]'));
  return { results, notices };
}

/** The snapshot refs a session has in the real .git (read as files: git itself would follow the redirect). */
function realSnapshotRefs(workspace: string, sessionId: string): string[] {
  const dir = path.join(workspace, '.git', 'refs', 'goalrun', sessionId);
  return fs.existsSync(dir) ? fs.readdirSync(dir).sort() : [];
}

describe('a model that redirects git to a config it wrote', () => {
  let store: SessionStore | undefined;
  afterAll(async () => store?.close());

  it('never gets its fsmonitor run by a snapshot, a fork or a clean; the goal goes on and the notice says why', async () => {
    const t = goalTestEnv('git-redirect', { OPENAI_API_KEY: WORKER_SECRET });
    makeRepo(t.workspace);
    const outside = tempDir('git-redirect-marker');
    const marker = path.join(outside, 'ran');
    const redirect = [
      `printf '#!/bin/sh\\nenv >> ${marker}\\n' > planted.sh && chmod +x planted.sh`,
      'mkdir .x && cp -r .git/objects .git/refs .git/HEAD .x/',
      `printf '[core]\\n\\trepositoryformatversion = 0\\n\\tfsmonitor = %s\\n' "$PWD/planted.sh" > .x/config`,
      'echo ../.x > .git/commondir && echo redirected',
    ].join(' && ');
    const turns = [
      { toolCalls: [{ name: 'file-write', args: { path: 'notes.txt', content: 'v1\n' } }] },
      {
        toolCalls: [
          bash('echo /tmp/elsewhere/objects > .git/objects/info/alternates'),
          bash('mkdir -p .git/info && echo planted > .git/info/grafts'),
        ],
      },
      { toolCalls: [bash(redirect)] },
      { toolCalls: [bash('echo v2 > notes.txt && git status --short')] },
      { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'tried' } }] },
    ];
    const model = scriptedModel(t.home, turns);
    const ran = await runCli(
      ['run', 'redirect git', '--workspace', t.workspace, '--model', model, '--json'],
      t.env,
    );
    expect(ran.code, ran.stderr).toBe(0);
    const { sessionId, status } = JSON.parse(ran.stdout);
    expect(status).toBe('completed');
    expect(fs.existsSync(marker)).toBe(false);

    store = await testStore(t.databaseUrl);
    const { results, notices } = transcriptOf(await store.listMessages(sessionId));
    expect(results[1]).toMatch(/alternates: Read-only file system/);
    expect(results[2]).toMatch(/Read-only file system/);
    expect(results[3]).toMatch(/redirected/);
    expect(fs.readFileSync(path.join(t.workspace, '.git/objects/info/alternates'), 'utf8')).toBe('');
    // Steps 1 and 2 were snapshotted; step 3's snapshot was refused, and no later one was tried.
    expect(realSnapshotRefs(t.workspace, sessionId)).toEqual(['1', '2']);
    const stopped = notices.filter((text) => text.includes('workspace snapshots stopped'));
    expect(stopped).toHaveLength(1);
    expect(stopped[0]).toMatch(/commondir points git at \.\.\/\.x/);

    const forked = await runCli(['fork', sessionId, '--at-step', '1'], t.env);
    expect(forked.code, forked.stderr).toBe(0);
    expect(forked.stdout).toMatch(/conversation only: git is not run on the repository at .*commondir/);
    expect(fs.existsSync(marker)).toBe(false);

    const cleaned = await runCli(['clean', '--project', t.workspace, '--keep', '0', '--yes'], t.env);
    expect(cleaned.code, cleaned.stderr).toBe(0);
    expect(fs.existsSync(marker)).toBe(false);

    // The plant was live all along: a plain git on the host runs it, with the worker's key if it had been there.
    execFileSync('git', ['status', '--short'], { cwd: t.workspace, env: { ...t.env }, stdio: 'pipe' });
    expect(fs.readFileSync(marker, 'utf8')).toContain(WORKER_SECRET);
  });

  it('leaves out files over snapshot_max_file_mib and stops at snapshot_max_total_mib, saying so', async () => {
    const t = goalTestEnv('snapshot-caps');
    makeRepo(t.workspace);
    fs.writeFileSync(
      path.join(t.home, 'config.json'),
      JSON.stringify({ snapshot_max_file_mib: 1, snapshot_max_total_mib: 1 }),
    );
    const turns = [
      { toolCalls: [bash('head -c 2000000 /dev/urandom > big.bin && head -c 600000 /dev/urandom > a.bin')] },
      { toolCalls: [bash('head -c 600000 /dev/urandom > b.bin')] },
      { toolCalls: [bash('echo c > c.txt')] },
      { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'wrote' } }] },
    ];
    const model = scriptedModel(t.home, turns);
    const ran = await runCli(['run', 'write', '--workspace', t.workspace, '--model', model, '--json'], t.env);
    expect(ran.code, ran.stderr).toBe(0);
    const { sessionId, recent } = JSON.parse(ran.stdout);
    expect(realSnapshotRefs(t.workspace, sessionId)).toEqual(['1', '2']);
    const first = git(t.workspace, 'ls-tree', '--name-only', `refs/goalrun/${sessionId}/1`);
    expect(first).toContain('a.bin');
    expect(first).not.toContain('big.bin');
    expect(JSON.stringify(recent)).toMatch(
      /the snapshot left out 1 file over 1 MiB \(snapshot_max_file_mib\): big\.bin/,
    );
    store ??= await testStore(t.databaseUrl);
    const stopped = transcriptOf(await store.listMessages(sessionId)).notices.filter((text) =>
      text.includes('workspace snapshots stopped'),
    );
    expect(stopped).toHaveLength(1);
    expect(stopped[0]).toMatch(/over their cap of 1 MiB \(snapshot_max_total_mib\)/);
  });

  it('refuses alternates outside the repository where the model can write them (--sandbox off)', async () => {
    const t = goalTestEnv('git-alternates');
    makeRepo(t.workspace);
    const other = tempDir('git-alternates-other');
    makeRepo(other);
    const turns = [
      { toolCalls: [bash(`echo ${other}/.git/objects > .git/objects/info/alternates && echo borrowed`)] },
      { toolCalls: [bash('echo more >> README')] },
      { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'borrowed' } }] },
    ];
    const model = scriptedModel(t.home, turns);
    const ran = await runCli(
      ['run', 'borrow objects', '--workspace', t.workspace, '--model', model, '--sandbox', 'off', '--json'],
      t.env,
    );
    expect(ran.code, ran.stderr).toBe(0);
    const { sessionId } = JSON.parse(ran.stdout);
    store ??= await testStore(t.databaseUrl);
    const { results, notices } = transcriptOf(await store.listMessages(sessionId));
    expect(results[0]).toMatch(/borrowed/);
    const stopped = notices.filter((text) => text.includes('workspace snapshots stopped'));
    expect(stopped).toHaveLength(1);
    expect(stopped[0]).toMatch(/alternates borrows objects from .*outside the repository/);
    expect(realSnapshotRefs(t.workspace, sessionId)).toEqual([]);
  });
});
