/**
 * Issue 17 (F-MEMORY) on real PostgreSQL: the expression index of migration 7 finds words in text
 * parts, tool-call arguments, tool results and summaries of rows that existed before it was built,
 * scoped to a project, leaving the asking session out, with the step a match belongs to.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { userText } from '../../core/messages';
import { MIGRATIONS, migrate } from '../../store/migrations';
import { createPgClient, type SqlClient } from '../../store/sql';
import { SqlSessionStore } from '../../store/sql-store';
import { createTestDatabase, type TestDatabase } from './test-databases';

const PROJECT = 'cccccccccccc';

describe('memory search', () => {
  let database: TestDatabase;
  let client: SqlClient;
  let store: SqlSessionStore;
  beforeAll(async () => {
    database = await createTestDatabase();
    client = createPgClient(database.url);
    // Rows written before migration 7: the index must cover them.
    await migrate(
      client,
      MIGRATIONS.filter((m) => m.id < 7),
    );
    store = new SqlSessionStore(client);
    const open = async (id: string, project = PROJECT) =>
      store.createSession({
        id,
        projectDir: `/p/${project}`,
        projectHash: project,
        objective: 'o',
        model: 'm',
        workflowId: `goal-${id}`,
      });
    await open(`${PROJECT}-old`);
    await open(`${PROJECT}-now`);
    await open(`${PROJECT}-ids`);
    await open('dddddddddddd-other', 'dddddddddddd');
    await store.appendMessage(`${PROJECT}-old`, 'initial', userText('The code word is periwinkle.'));
    await store.appendMessage(`${PROJECT}-old`, 'step:1@1', {
      role: 'assistant',
      content: [
        {
          type: 'tool-call',
          toolCallId: 'c1',
          toolName: 'bash',
          input: { command: 'deploy --target saffron' },
        },
      ],
    });
    await store.appendMessage(`${PROJECT}-old`, 'result:c1', {
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: 'c1',
          toolName: 'bash',
          output: { type: 'text', value: 'deployed the marmalade build' },
        },
      ],
    });
    await store.appendMessage(`${PROJECT}-old`, 'step:2@1', {
      role: 'assistant',
      content: [{ type: 'text', text: 'All done.' }],
    });
    await store.appendMessage(
      `${PROJECT}-old`,
      'summary:1',
      userText('Summary: the team chose the tangerine plan.'),
    );
    // Issue 26 item 3: identifiers, a file name in a tool result, and a finish summary.
    await store.appendMessage(`${PROJECT}-ids`, 'initial', userText('Find the release code word.'));
    await store.appendMessage(`${PROJECT}-ids`, 'step:1@1', {
      role: 'assistant',
      content: [{ type: 'tool-call', toolCallId: 'g1', toolName: 'glob', input: { pattern: '**/*' } }],
    });
    await store.appendMessage(`${PROJECT}-ids`, 'result:g1', {
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: 'g1',
          toolName: 'glob',
          output: { type: 'text', value: 'src/app.ts\nnotes.txt\n' },
        },
      ],
    });
    await store.appendMessage(`${PROJECT}-ids`, 'result:r1', {
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: 'r1',
          toolName: 'file-read',
          output: {
            type: 'text',
            value: `${'Preamble words here. '.repeat(30)}The release code word is ZEBRA-4411. Shipped as v1.2.3 from foo.bar_baz.${' Trailing words.'.repeat(30)}`,
          },
        },
      ],
    });
    await store.appendMessage(`${PROJECT}-ids`, 'step:2@1', {
      role: 'assistant',
      content: [
        {
          type: 'tool-call',
          toolCallId: 'f1',
          toolName: 'finish',
          input: { status: 'complete', summary: 'Wrote the albatross report to out/report-v2.md' },
        },
      ],
    });
    await store.appendMessage(`${PROJECT}-now`, 'initial', userText('What was the periwinkle thing?'));
    await store.appendMessage('dddddddddddd-other', 'initial', userText('periwinkle in another project'));
    await store.renameSession(`${PROJECT}-old`, 'first try');
    await migrate(client);
  });
  afterAll(async () => {
    await client.close();
    await database.drop();
  });

  it('finds text, tool arguments, tool results and summaries, with session, name and step', async () => {
    const find = (text: string) =>
      store.searchMemory({ text, projectHashes: [PROJECT], excludeSessionId: `${PROJECT}-now`, limit: 10 });
    const word = await find('periwinkle');
    expect(word).toHaveLength(1);
    expect(word[0]).toMatchObject({
      sessionId: `${PROJECT}-old`,
      sessionName: 'first try',
      step: 0,
      role: 'user',
    });
    expect(word[0].snippet).toContain('**periwinkle**');
    expect((await find('saffron'))[0]).toMatchObject({ step: 1, role: 'assistant' });
    expect((await find('marmalade'))[0]).toMatchObject({ step: 1, role: 'tool' });
    expect((await find('tangerine'))[0]).toMatchObject({ step: 2 });
    // Stemming: "deploying" finds "deployed" and "deploy".
    expect((await find('deploying')).length).toBe(2);
    expect(await find('tool-call')).toEqual([]);
  });

  it('finds identifiers whole and file names by their parts, with whole-token excerpts (issue 26)', async () => {
    const find = (text: string) =>
      store.searchMemory({ text, projectHashes: [PROJECT], excludeSessionId: `${PROJECT}-now`, limit: 10 });
    for (const [query, token] of [
      ['ZEBRA-4411', 'ZEBRA-4411'],
      ['zebra-4411', 'ZEBRA-4411'],
      ['v1.2.3', 'v1.2.3'],
      ['foo.bar_baz', 'foo.bar_baz'],
    ]) {
      const matches = await find(query);
      expect(
        matches.map((m) => m.seq),
        query,
      ).toHaveLength(1);
      const snippet = matches[0].snippet;
      expect(snippet, query).toContain(`**${token}**`);
      // Whole words, up to 200 characters either side.
      expect(
        snippet.startsWith('… Preamble') || snippet.startsWith('… words') || snippet.startsWith('… here.'),
      ).toBe(true);
      expect(snippet.endsWith(' …')).toBe(true);
      expect(snippet.length).toBeLessThan(200 * 2 + 120);
    }
    // A phrase of the parts only matches them side by side.
    expect(await find('ZEBRA-9999')).toEqual([]);
    const notes = await find('notes');
    expect(notes.map((m) => m.role)).toEqual(['tool']);
    expect(notes[0].snippet).toContain('**notes.txt**');
    expect((await find('notes.txt'))[0].snippet).toContain('**notes.txt**');
    const summary = await find('albatross');
    expect(summary[0]).toMatchObject({ role: 'assistant', step: 2 });
    expect(summary[0].snippet).toContain('**albatross**');
    expect((await find('report-v2.md'))[0].snippet).toContain('**out/report-v2.md**');
  });

  it('leaves out the asking session, and other projects unless asked for every project', async () => {
    const mine = await store.searchMemory({ text: 'periwinkle', projectHashes: [PROJECT], limit: 10 });
    expect(mine.map((m) => m.sessionId).sort()).toEqual([`${PROJECT}-now`, `${PROJECT}-old`]);
    const all = await store.searchMemory({
      text: 'periwinkle',
      projectHashes: null,
      excludeSessionId: `${PROJECT}-now`,
      limit: 10,
    });
    expect(all.map((m) => m.sessionId).sort()).toEqual([`${PROJECT}-old`, 'dddddddddddd-other']);
  });

  it('answers from the GIN index', async () => {
    await client.query('SET enable_seqscan = off');
    const { rows } = await client.query<{ 'QUERY PLAN': string }>(
      `EXPLAIN SELECT seq FROM messages WHERE search_tsv @@ websearch_to_tsquery('english', 'periwinkle')`,
    );
    await client.query('SET enable_seqscan = on');
    expect(rows.map((r) => r['QUERY PLAN']).join('\n')).toContain('messages_memory_idx');
  });
});
