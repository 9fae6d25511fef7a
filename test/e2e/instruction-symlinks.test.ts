/**
 * Issue 24 §1: instruction files are read by one reader of the untrusted workspace, which follows no
 * symbolic link. AGENTS.md and CLAUDE.md linked to a host file outside the workspace, at the top and
 * nested, planted before the goal and by the model during it, never bring that file to the model: not
 * at the start, not in a file tool's result, not after a resume. The model and the user are told why.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workflowIdOf } from '../../workflows/definitions';
import { killAndWait, runCli, spawnCli, tempDir } from '../support/cli';
import { goalTestEnv, testStore } from '../support/goal-env';
import { goalArgs } from '../support/goal-steps';
import { type OpenAITestServer, startOpenAITestServer } from '../support/openai-test-server';

/** What the host file holds: it must never reach a model request. */
const HOST_SECRET = 'HOST-ONLY-7f3a91-do-not-send';

describe('instruction files linked to a host file', () => {
  let server: OpenAITestServer;
  let client: Client;
  beforeAll(async () => {
    server = await startOpenAITestServer();
    client = new Client({
      connection: await Connection.connect({ address: goalTestEnv('instr-probe').temporalAddress }),
    });
  });
  afterAll(async () => {
    await server?.close();
    await client?.connection.close();
  });

  it('never send the host file to the model, at the top, nested, planted mid-goal or after a resume', async () => {
    const t = goalTestEnv('instr-links');
    const hostDir = tempDir('instr-host');
    const hostFile = path.join(hostDir, 'id_ed25519');
    fs.writeFileSync(hostFile, `${HOST_SECRET}\n`);
    // Planted before the goal: the top-level AGENTS.md, a nested CLAUDE.md, and a nested directory
    // whose own path is a link out of the workspace.
    fs.symlinkSync(hostFile, path.join(t.workspace, 'AGENTS.md'));
    fs.writeFileSync(
      path.join(t.workspace, 'CLAUDE.md'),
      'TOP-CLAUDE-RULE: fallback when AGENTS.md is refused.\n',
    );
    fs.mkdirSync(path.join(t.workspace, 'd'));
    fs.writeFileSync(path.join(t.workspace, 'd', 'notes.txt'), 'notes\n');
    fs.symlinkSync(hostFile, path.join(t.workspace, 'd', 'CLAUDE.md'));
    fs.mkdirSync(path.join(hostDir, 'outside'));
    fs.writeFileSync(path.join(hostDir, 'outside', 'AGENTS.md'), `${HOST_SECRET} (linked dir)\n`);
    fs.symlinkSync(path.join(hostDir, 'outside'), path.join(t.workspace, 'linked'));
    // A regular nested file is still read: the reader refuses links, not instructions.
    fs.mkdirSync(path.join(t.workspace, 'ok'));
    fs.writeFileSync(path.join(t.workspace, 'ok', 'AGENTS.md'), 'NESTED-OK-RULE: keep it short.\n');

    const objective = 'read around the workspace';
    const before = server.requests.length;
    server.enqueue(
      { toolCalls: [{ name: 'file-read', args: { path: 'd/notes.txt' } }] },
      { toolCalls: [{ name: 'glob', args: { pattern: '*', path: 'linked' } }] },
      { toolCalls: [{ name: 'file-read', args: { path: 'ok/AGENTS.md' } }] },
      // The model plants a link of its own, then works in that directory.
      {
        toolCalls: [
          {
            name: 'bash',
            args: { command: `mkdir -p e && ln -s ${hostFile} e/AGENTS.md && echo e > e/x.txt` },
          },
        ],
      },
      { toolCalls: [{ name: 'file-read', args: { path: 'e/x.txt' } }] },
      { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'read around' } }] },
    );
    // One worker serves both runs: the resume never meets the first run still ending.
    const worker = spawnCli(['worker'], t.env);
    try {
      const first = await runCli(
        goalArgs('run', objective, t, server, ['--json', '--no-worker']),
        t.env,
        180_000,
      );
      expect(first.code, first.stderr).toBe(0);
      const { sessionId } = JSON.parse(first.stdout);
      const firstRequests = server.requests.slice(before);
      expect(firstRequests).toHaveLength(6);
      for (const request of firstRequests) expect(JSON.stringify(request.body)).not.toContain(HOST_SECRET);
      const firstText = JSON.stringify(firstRequests.map((request) => request.body));
      // The refused top-level AGENTS.md falls back to the regular CLAUDE.md beside it.
      expect(firstText).toContain('TOP-CLAUDE-RULE');
      expect(firstText).toContain('NESTED-OK-RULE');
      // The model is told why a nested file was not read.
      expect(firstText).toMatch(/d\/CLAUDE\.md[^"]*symbolic link/);
      expect(firstText).toMatch(/e\/AGENTS\.md[^"]*symbolic link/);

      // The model makes the top-level file a link too (the regular CLAUDE.md is gone): a resume must
      // not read it either.
      await client.workflow
        .getHandle(workflowIdOf(sessionId))
        .result()
        .catch(() => undefined);
      fs.rmSync(path.join(t.workspace, 'CLAUDE.md'));
      fs.symlinkSync(hostFile, path.join(t.workspace, 'CLAUDE.md'));
      const resumedFrom = server.requests.length;
      server.enqueue(
        { toolCalls: [{ name: 'file-read', args: { path: 'd/notes.txt' } }] },
        { toolCalls: [{ name: 'file-read', args: { path: 'e/x.txt' } }] },
        { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'again' } }] },
      );
      const resumed = await runCli(
        ['resume', sessionId, '--message', 'once more', '--json', '--no-worker'],
        t.env,
        180_000,
      );
      expect(resumed.code, resumed.stderr).toBe(0);
      const resumedRequests = server.requests.slice(resumedFrom);
      expect(resumedRequests.length).toBeGreaterThanOrEqual(3);
      for (const request of resumedRequests) expect(JSON.stringify(request.body)).not.toContain(HOST_SECRET);

      // The user sees why: notices name the refused files.
      const store = await testStore(t.databaseUrl);
      try {
        const notices = (await store.listEvents(sessionId))
          .filter((event) => event.kind === 'notice')
          .map((event) => (event.data as { text: string }).text)
          .join('\n');
        expect(notices).toMatch(/AGENTS\.md.*symbolic link/);
        expect(notices).toMatch(/CLAUDE\.md.*symbolic link/);
        expect(JSON.stringify(await store.listMessages(sessionId))).not.toContain(HOST_SECRET);
      } finally {
        await store.close();
      }
    } finally {
      await killAndWait(worker, 'SIGTERM');
    }
  }, 300_000);
});
