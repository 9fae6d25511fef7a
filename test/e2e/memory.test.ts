/**
 * Issue 17 (F-MEMORY) through the built CLI: a code word given to an earlier session is found by the
 * model's memory-search tool in a later one (the snippet names the earlier session, the later one is
 * left out) and by `goalrun search`; a secret a tool read is indexed only as [REDACTED]. Issue 26
 * item 3: hyphenated and dotted identifiers come back whole, through the model's tool and the CLI,
 * and a file name in a tool result is found by its name.
 */

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REDACTED } from '../../activities/sandbox/redact';
import { CLI, runCli } from '../support/cli';
import { goalTestEnv, testStore } from '../support/goal-env';
import { goalArgs } from '../support/goal-steps';
import { type OpenAITestServer, startOpenAITestServer } from '../support/openai-test-server';

const SECRET = 'planted-memory-token-55443322';

describe('session memory', () => {
  let server: OpenAITestServer;
  beforeAll(async () => {
    server = await startOpenAITestServer();
  });
  afterAll(async () => server?.close());

  it('finds an earlier session by a word, from the model tool and from the CLI, redacted', async () => {
    const t = goalTestEnv('memory', { DEPLOY_TOKEN: SECRET });
    fs.writeFileSync(path.join(t.workspace, 'credentials.txt'), `jacaranda deploy credential: ${SECRET}\n`);
    const run = (objective: string, extra: string[] = []) =>
      runCli(goalArgs('run', objective, t, server, ['--json', ...extra]), t.env);
    const finish = { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'ok' } }] };

    server.enqueue({ toolCalls: [{ name: 'file-read', args: { path: 'credentials.txt' } }] }, finish);
    const first = await run('Remember the code word quokka-lantern for the next session.', [
      '--name',
      'briefing',
    ]);
    expect(first.code, first.stderr).toBe(0);
    const firstId = JSON.parse(first.stdout).sessionId as string;

    server.enqueue({ toolCalls: [{ name: 'memory-search', args: { query: 'quokka' } }] }, finish);
    const before = server.requests.length;
    const second = await run('What did the earlier session have to remember?');
    expect(second.code, second.stderr).toBe(0);
    const secondId = JSON.parse(second.stdout).sessionId as string;

    // The model was offered the tool and was shown the earlier session's snippet.
    const offered = JSON.stringify(server.requests[before].body);
    expect(offered).toContain('memory-search');
    const store = await testStore(t.databaseUrl);
    try {
      const results = (await store.listMessages(secondId)).filter((m) => m.message.role === 'tool');
      const shown = JSON.stringify(results[0].message);
      expect(shown).toContain(`session \\"briefing\\" ${firstId} · step 0`);
      // The whole token is highlighted, not the part the query named (issue 26).
      expect(shown).toContain('**quokka-lantern**');
      // Its own tool call (which says quokka too) is left out: only the earlier session is named.
      expect(shown).not.toContain(secondId);
      expect(JSON.stringify(server.requests[before + 1].body)).toContain(firstId);
    } finally {
      await store.close();
    }

    const search = (words: string, extra: string[] = []) =>
      spawnSync(process.execPath, [CLI, 'search', words, ...extra], {
        cwd: t.workspace,
        env: t.env,
        encoding: 'utf8',
      });
    const found = search('quokka', ['--json']);
    expect(found.status, found.stderr).toBe(0);
    const matches = JSON.parse(found.stdout) as Array<{
      sessionId: string;
      sessionName: string;
      step: number;
      snippet: string;
    }>;
    expect(matches.map((m) => m.sessionId)).toContain(firstId);
    expect(matches.find((m) => m.sessionId === firstId)).toMatchObject({ sessionName: 'briefing', step: 0 });
    const text = search('quokka');
    expect(text.stdout).toContain(`briefing ${firstId} · step 0`);

    // The secret was redacted before it was stored, so it is not in the index; its neighbour is.
    const secret = search(SECRET, ['--json']);
    expect(secret.status, secret.stderr).toBe(0);
    expect(JSON.parse(secret.stdout)).toEqual([]);
    const neighbour = JSON.parse(search('jacaranda', ['--json']).stdout) as Array<{ snippet: string }>;
    expect(neighbour.length).toBeGreaterThan(0);
    // An excerpt cuts at white space only, so the marker is whole (issue 26).
    expect(neighbour[0].snippet).toContain(REDACTED);
    expect(neighbour[0].snippet).not.toContain(SECRET);

    // Another directory sees nothing without --all.
    const elsewhere = spawnSync(process.execPath, [CLI, 'search', 'quokka', '--json'], {
      env: t.env,
      encoding: 'utf8',
    });
    expect(JSON.parse(elsewhere.stdout).map((m: { sessionId: string }) => m.sessionId)).not.toContain(
      firstId,
    );
    const all = spawnSync(process.execPath, [CLI, 'search', 'quokka', '--all', '--json'], {
      env: t.env,
      encoding: 'utf8',
    });
    expect(JSON.parse(all.stdout).map((m: { sessionId: string }) => m.sessionId)).toContain(firstId);
  });

  it('returns hyphenated and dotted identifiers whole, to the model and in the CLI (issue 26)', async () => {
    const t = goalTestEnv('memory-ids');
    const filler = 'Some earlier paragraph of the release notes that pads the file. '.repeat(6);
    fs.writeFileSync(
      path.join(t.workspace, 'release.md'),
      `${filler}\nThe release code word is ZEBRA-4411. It shipped as v1.2.3 from foo.bar_baz.\n${filler}`,
    );
    fs.writeFileSync(path.join(t.workspace, 'notes.txt'), 'x\n');
    const run = (objective: string) => runCli(goalArgs('run', objective, t, server, ['--json']), t.env);
    const finish = (summary: string) => ({
      toolCalls: [{ name: 'finish', args: { status: 'complete', summary } }],
    });
    server.enqueue(
      { toolCalls: [{ name: 'file-read', args: { path: 'release.md' } }] },
      { toolCalls: [{ name: 'glob', args: { pattern: '*.txt' } }] },
      finish('Read the release notes; the code word is in release.md'),
    );
    const first = await run('Read the release notes.');
    expect(first.code, first.stderr).toBe(0);
    const firstId = JSON.parse(first.stdout).sessionId as string;

    server.enqueue(
      { toolCalls: [{ name: 'memory-search', args: { query: 'ZEBRA-4411' } }] },
      finish('found'),
    );
    const before = server.requests.length;
    const second = await run('What was the release code word?');
    expect(second.code, second.stderr).toBe(0);
    // What the model was shown: the whole identifier, and the sentence it is in.
    const shown = JSON.stringify(server.requests[before + 1].body);
    expect(shown).toContain(firstId);
    expect(shown).toContain('The release code word is **ZEBRA-4411**.');
    expect(shown).not.toContain('**ZEBRA**');

    const search = (words: string) =>
      spawnSync(process.execPath, [CLI, 'search', words], { cwd: t.workspace, env: t.env, encoding: 'utf8' });
    for (const [query, token] of [
      ['ZEBRA-4411', 'ZEBRA-4411'],
      ['v1.2.3', 'v1.2.3'],
      ['foo.bar_baz', 'foo.bar_baz'],
      ['notes', 'notes.txt'],
    ]) {
      const found = search(query);
      expect(found.status, found.stderr).toBe(0);
      expect(found.stdout, query).toContain(firstId);
      expect(found.stdout, query).toContain(`**${token}**`);
    }
    expect(search('ZEBRA-4411').stdout).not.toContain('**ZEBRA****');
    // The finish summary is indexed too.
    expect(search('"code word is in release.md"').stdout).toContain('**release.md**');
  });
});
