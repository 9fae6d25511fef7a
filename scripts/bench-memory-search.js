#!/usr/bin/env node
/**
 * bench-memory-search: how long a memory search takes over 100,000 stored messages (issue 17, F-MEMORY).
 *
 *   node scripts/bench-memory-search.js [--messages 100000] [--sessions 200] [--repeat 30]
 *
 * Needs the compiled dist/ and a PostgreSQL server ($DATABASE_URL's, default postgres://root@127.0.0.1:5432/test).
 * It creates a throwaway database, applies goalrun's migrations, fills it with sessions whose messages
 * have goalrun's shapes (user text, assistant text with tool calls, tool results) of ~60 words each
 * drawn from a 5,000-word vocabulary, VACUUM ANALYZEs it, and times the store's searchMemory (the query
 * of the memory-search tool and `goalrun search`): a rare word, a common word, and a two-word query,
 * within one project and across all of them. Prints the median and p95 in ms per query kind.
 */
'use strict';

const { performance } = require('node:perf_hooks');
const { benchArgs } = require('./bench/args');
const { createDatabase, fmt, fromDist, median, runMain } = require('./bench/support');

const { values } = benchArgs(__filename, {
  options: {
    messages: { type: 'string', default: '100000' },
    sessions: { type: 'string', default: '200' },
    repeat: { type: 'string', default: '30' },
  },
});

/** Projects the sessions are spread over (a search is scoped to one). */
const PROJECTS = 10;

function p95(list) {
  const sorted = [...list].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.95))];
}

async function main() {
  const messages = Number(values.messages);
  const sessions = Number(values.sessions);
  const repeat = Number(values.repeat);
  const { createPgClient } = fromDist('store/sql.js');
  const { migrate } = fromDist('store/migrations.js');
  const { SqlSessionStore } = fromDist('store/sql-store.js');
  const { url } = await createDatabase();
  const client = createPgClient(url);
  try {
    await migrate(client);
    const store = new SqlSessionStore(client);
    const fillStarted = performance.now();
    await client.exec(`
CREATE TEMP TABLE vocab AS SELECT i, 'w' || md5(i::text) AS word FROM generate_series(1, 5000) i;
INSERT INTO sessions (id, project_dir, project_hash, objective, model, workflow_id, name)
SELECT 'p' || lpad((s % ${PROJECTS})::text, 11, '0') || '-s' || s, '/p/' || (s % ${PROJECTS}),
       'p' || lpad((s % ${PROJECTS})::text, 11, '0'), 'objective ' || s, 'm', 'goal-' || s, 'session ' || s
FROM generate_series(1, ${sessions}) s;
INSERT INTO messages (session_id, key, role, content)
SELECT 'p' || lpad((s % ${PROJECTS})::text, 11, '0') || '-s' || s,
       CASE n % 3 WHEN 0 THEN 'step:' || n || '@1' WHEN 1 THEN 'result:c' || n ELSE 'steer:' || n END,
       CASE n % 3 WHEN 0 THEN 'assistant' WHEN 1 THEN 'tool' ELSE 'user' END,
       CASE n % 3
         WHEN 0 THEN jsonb_build_array(jsonb_build_object('type', 'text', 'text', t.body),
                     jsonb_build_object('type', 'tool-call', 'toolCallId', 'c' || n, 'toolName', 'bash',
                                        'input', jsonb_build_object('command', 'grep ' || t.first)))
         WHEN 1 THEN jsonb_build_array(jsonb_build_object('type', 'tool-result', 'toolCallId', 'c' || n,
                     'toolName', 'bash', 'output', jsonb_build_object('type', 'text', 'value', t.body)))
         ELSE jsonb_build_array(jsonb_build_object('type', 'text', 'text', t.body))
       END
FROM (SELECT n, 1 + (n % ${sessions}) AS s FROM generate_series(1, ${messages}) n) g,
LATERAL (
  SELECT string_agg(vocab.word, ' ')
           || CASE WHEN g.n % 20000 = 7 THEN ' zebracode' ELSE '' END
           || CASE WHEN g.n % 4 = 0 THEN ' alphacommon' ELSE '' END AS body,
         min(vocab.word) AS first
  FROM generate_series(1, 60) k JOIN vocab ON vocab.i = 1 + ((g.n * 7919 + k * 104729) % 5000)
) t;`);
    await client.exec('VACUUM ANALYZE messages');
    await client.exec('VACUUM ANALYZE sessions');
    const fillMs = performance.now() - fillStarted;
    const count = (await client.query('SELECT count(*)::int AS n FROM messages')).rows[0].n;
    const indexBytes = (await client.query("SELECT pg_relation_size('messages_memory_idx') AS b")).rows[0].b;
    console.log(
      `filled ${count} messages in ${sessions} sessions (${PROJECTS} projects) in ${fmt(fillMs / 1000, 1)} s; index ${fmt(indexBytes / 1048576, 1)} MiB`,
    );
    const project = ['p00000000003'];
    const cases = [
      ['rare word (5 matches), one project', 'zebracode', project],
      ['rare word, every project', 'zebracode', null],
      ['common word (1 in 4 messages), one project', 'alphacommon', project],
      ['common word, every project', 'alphacommon', null],
      ['two words, one project', 'alphacommon zebracode', project],
    ];
    for (const [label, text, projectHashes] of cases) {
      const times = [];
      let found = 0;
      for (let i = 0; i < repeat + 2; i++) {
        const started = performance.now();
        const hits = await store.searchMemory({ text, projectHashes, limit: 8 });
        if (i >= 2) times.push(performance.now() - started);
        found = hits.length;
      }
      console.log(
        `${label}: median ${fmt(median(times), 1)} ms, p95 ${fmt(p95(times), 1)} ms (${found} shown)`,
      );
    }
  } finally {
    await client.close();
  }
}

runMain(main);
