/**
 * Fills a session store with other sessions, as a store looks after months of use: what
 * scripts/bench-store-scale.js and test/store/store-scale-plans.test.ts run a goal next to.
 *
 * The rows have the shapes goalrun writes (store/migrations.ts, core/store-keys.ts): per session an
 * `initial` user message, then assistant steps (`step:N@1`) with a bash tool call and their results
 * (`result:<call id>`, stub facts in `meta`); events per step: `step-start:N@1`, progress events
 * (unkeyed), `usage:N@1` (model-usage), `tool:<call id>`, `tasks:<call id>`, a notice; every tenth
 * step's output spooled; a few checkpoints. Each statement inserts one table's rows of a batch of
 * sessions with generate_series, the steps of the batch's sessions interleaved as concurrent goals
 * interleave them, so filling 1M events takes a minute or two, not an hour. Plain CommonJS: the
 * benchmark runs over dist/ and the test loads it with createRequire.
 */
'use strict';

/** The figures of issue 20: 1,000 other sessions, 1M events, 100k messages. */
const DEFAULT_FILL = { sessions: 1000, events: 1_000_000, messages: 100_000 };
/** Sessions inserted per statement: bounds each statement's memory and shows progress. */
const SESSIONS_PER_BATCH = 100;
/** Events of one model step: step-start, progress events, usage, tool, tasks, notice. */
const EVENTS_PER_STEP = 20;
/** One step in this many has its output spooled. */
const SPOOL_EVERY_STEPS = 10;
const CHECKPOINTS_PER_SESSION = 5;
/** Distinct projects (project hashes) the sessions belong to. */
const PROJECTS = 50;

// Session number s (1-based within this fill) as SQL, given a generate_series column `s`.
const SESSION_ID = `substr(md5('project-' || (s % ${PROJECTS})), 1, 12) || '-' ||
  to_char(timestamp '2026-01-01' + s * interval '7 minutes', 'YYYYMMDD"T"HH24MISSMS"Z"')`;
const CALL_ID = (step) => `'call_' || s || '_' || ${step}`;

/** Inserts the sessions $1..$2 (numbers) with `messagesPer` messages and `eventsPer` events each. */
function batchStatements(messagesPer, eventsPer) {
  // The first message and a compaction summary, then an assistant call and its result per step.
  const steps = Math.max(1, Math.floor((messagesPer - 2) / 2));
  return [
    `INSERT INTO sessions (id, project_dir, project_hash, objective, status, reason, model, workflow_id,
                           goal_state, name, created_at, updated_at)
     SELECT ${SESSION_ID}, '/home/dev/project-' || (s % ${PROJECTS}), substr(md5('project-' || (s % ${PROJECTS})), 1, 12),
            'make the failing tests in service ' || s || ' pass, then refactor the parser and document it',
            (ARRAY['completed','completed','completed','failed','cancelled','limit_reached'])[1 + s % 6],
            CASE WHEN s % 6 = 3 THEN 'model step failed: provider returned 500' END,
            'openai:gpt-4o', 'goal-' || ${SESSION_ID},
            jsonb_build_object('status', 'completed', 'iteration', 3, 'steps', ${steps},
              'goal', jsonb_build_object('objective', 'make the failing tests pass', 'workspace', '/home/dev/project',
                                         'model', 'openai:gpt-4o', 'limits', jsonb_build_object('maxSteps', 500)),
              'tasks', (SELECT jsonb_agg(jsonb_build_object('id', 'task-' || t, 'content', 'task number ' || t,
                                                            'status', 'completed', 'dependencies', '[]'::jsonb))
                          FROM generate_series(1, 8) t),
              'usage', jsonb_build_object('inputTokens', 120000, 'outputTokens', 9000)),
            CASE WHEN s % 10 = 0 THEN 'session ' || s END,
            timestamp '2026-01-01' + s * interval '7 minutes', timestamp '2026-01-01' + s * interval '7 minutes'
     FROM generate_series($1::int, $2::int) s`,
    // Messages: the first one, then step by step an assistant call and its result, sessions interleaved.
    `INSERT INTO messages (session_id, key, role, content, meta, created_at)
     SELECT ${SESSION_ID}, 'initial', 'user',
            jsonb_build_array(jsonb_build_object('type', 'text', 'text',
              'Objective: make the failing tests in service ' || s || ' pass. ' || repeat('Environment line. ', 30))),
            NULL, timestamp '2026-01-01' + s * interval '7 minutes'
     FROM generate_series($1::int, $2::int) s`,
    `INSERT INTO messages (session_id, key, role, content, meta, created_at)
     SELECT ${SESSION_ID}, 'summary:1', 'user',
            jsonb_build_array(jsonb_build_object('type', 'text', 'text',
              '## Goal' || chr(10) || 'make the tests pass' || chr(10) || repeat('- a fact the summary keeps' || chr(10), 40))),
            NULL, timestamp '2026-01-01' + s * interval '7 minutes' + interval '2 minutes'
     FROM generate_series($1::int, $2::int) s`,
    `INSERT INTO messages (session_id, key, role, content, meta, created_at)
     SELECT ${SESSION_ID},
            CASE WHEN part = 0 THEN 'step:' || n || '@1' ELSE 'result:' || ${CALL_ID('n')} END,
            CASE WHEN part = 0 THEN 'assistant' ELSE 'tool' END,
            CASE WHEN part = 0 THEN jsonb_build_array(
                   jsonb_build_object('type', 'text', 'text', 'Running the tests of module ' || n || '.'),
                   jsonb_build_object('type', 'tool-call', 'toolCallId', ${CALL_ID('n')}, 'toolName', 'bash',
                                      'input', jsonb_build_object('command', 'npm test -- test/module-' || n || '.test.ts')))
                 ELSE jsonb_build_array(jsonb_build_object('type', 'tool-result', 'toolCallId', ${CALL_ID('n')},
                   'toolName', 'bash', 'output', jsonb_build_object('type', 'text',
                   'value', repeat('PASS test/module-' || n || '.test.ts (12 tests) 340 ms' || chr(10), 12))))
            END,
            CASE WHEN part = 0 THEN jsonb_build_object('usage', jsonb_build_object('inputTokens', 2400 + n * 40,
                   'outputTokens', 60, 'cacheReadTokens', 0, 'cacheWriteTokens', 0), 'finishReason', 'tool-calls',
                   'model', 'openai:gpt-4o')
                 ELSE jsonb_build_object('tool', jsonb_build_object('ok', true, 'changedWorkspace', false,
                   'bytes', 552, 'lines', 12, 'firstLine', 'PASS test/module-' || n || '.test.ts',
                   'lastLine', 'PASS test/module-' || n || '.test.ts', 'argsDigest', md5(n::text)))
            END,
            timestamp '2026-01-01' + s * interval '7 minutes' + n * interval '5 seconds'
     FROM generate_series(1, ${steps}) n, generate_series(0, 1) part, generate_series($1::int, $2::int) s`,
    `INSERT INTO events (session_id, kind, key, data, created_at)
     SELECT ${SESSION_ID},
            CASE slot WHEN 0 THEN 'step-start' WHEN ${EVENTS_PER_STEP - 4} THEN 'model-usage'
                      WHEN ${EVENTS_PER_STEP - 3} THEN 'tool' WHEN ${EVENTS_PER_STEP - 2} THEN 'task-update'
                      WHEN ${EVENTS_PER_STEP - 1} THEN 'notice' ELSE 'progress' END,
            CASE slot WHEN 0 THEN 'step-start:' || step || '@1' WHEN ${EVENTS_PER_STEP - 4} THEN 'usage:' || step || '@1'
                      WHEN ${EVENTS_PER_STEP - 3} THEN 'tool:' || ${CALL_ID('step')}
                      WHEN ${EVENTS_PER_STEP - 2} THEN 'tasks:' || ${CALL_ID('step')} END,
            CASE slot WHEN 0 THEN jsonb_build_object('step', step, 'model', 'openai:gpt-4o')
                      WHEN ${EVENTS_PER_STEP - 4} THEN jsonb_build_object('step', step, 'model', 'openai:gpt-4o',
                        'usage', jsonb_build_object('inputTokens', 2400, 'outputTokens', 60),
                        'finishReason', 'tool-calls', 'text', 'Running the tests of module ' || step || '.',
                        'toolCalls', jsonb_build_array(jsonb_build_object('id', ${CALL_ID('step')}, 'name', 'bash',
                          'summary', 'bash: npm test', 'arguments', '{"command":"npm test"}')))
                      WHEN ${EVENTS_PER_STEP - 3} THEN jsonb_build_object('toolCallId', ${CALL_ID('step')},
                        'toolName', 'bash', 'ok', true, 'bytes', 552, 'lines', 12, 'attempt', 1,
                        'head', repeat('PASS test/module.test.ts' || chr(10), 6))
                      WHEN ${EVENTS_PER_STEP - 2} THEN jsonb_build_object('tasks', jsonb_build_array(
                        jsonb_build_object('id', 'task-1', 'content', 'run the tests', 'status', 'in_progress')))
                      WHEN ${EVENTS_PER_STEP - 1} THEN jsonb_build_object('text', 'context at 41% of the window')
                      ELSE jsonb_build_object('step', step, 'receivedChars', slot * 180) END,
            timestamp '2026-01-01' + s * interval '7 minutes' + (step * ${EVENTS_PER_STEP} + slot) * interval '250 milliseconds'
     FROM generate_series(1, ${Math.max(1, Math.floor(eventsPer / EVENTS_PER_STEP))}) step,
          generate_series(0, ${EVENTS_PER_STEP - 1}) slot, generate_series($1::int, $2::int) s`,
    `INSERT INTO spool (session_id, key, tool_name, content, size_bytes, created_at)
     SELECT ${SESSION_ID}, ${CALL_ID('n')}, 'bash', repeat('test output line ' || n || chr(10), 400),
            octet_length(repeat('test output line ' || n || chr(10), 400)),
            timestamp '2026-01-01' + s * interval '7 minutes'
     FROM generate_series(${SPOOL_EVERY_STEPS}, ${steps}, ${SPOOL_EVERY_STEPS}) n, generate_series($1::int, $2::int) s`,
    `INSERT INTO checkpoints (session_id, goal_state, tasks, created_at)
     SELECT id, goal_state, goal_state -> 'tasks', created_at + c * interval '1 minute'
     FROM sessions, generate_series(1, ${CHECKPOINTS_PER_SESSION}) c
     WHERE id IN (SELECT ${SESSION_ID} FROM generate_series($1::int, $2::int) s)`,
  ];
}

/**
 * Inserts `sessions` sessions holding about `events` events and `messages` messages in all (each
 * session gets an equal share), then VACUUM ANALYZEs the tables. `db.query(text, params)` is a pg client's
 * or a goalrun SqlClient's. Sessions are numbered from `firstSession`, so fills can be added to.
 * Returns the row counts of the tables.
 */
async function fillStore(db, options = {}) {
  const { sessions, events, messages } = { ...DEFAULT_FILL, ...options };
  const firstSession = options.firstSession ?? 1;
  const onProgress = options.onProgress ?? (() => {});
  const statements = batchStatements(Math.round(messages / sessions), Math.round(events / sessions));
  const last = firstSession + sessions - 1;
  for (let from = firstSession; from <= last; from += SESSIONS_PER_BATCH) {
    const to = Math.min(last, from + SESSIONS_PER_BATCH - 1);
    for (const sql of statements) await db.query(sql, [from, to]);
    onProgress(to - firstSession + 1, sessions);
  }
  // What autovacuum would have done by the time a store holds this much: statistics, and no vacuum
  // of a million fresh rows (nor hint bits to set) left to run while the goal is measured.
  await db.query('VACUUM (ANALYZE) sessions, messages, events, spool, checkpoints');
  return rowCounts(db);
}

/** Rows per table of the session store. */
async function rowCounts(db) {
  const { rows } = await db.query(
    `SELECT (SELECT count(*) FROM sessions) AS sessions, (SELECT count(*) FROM messages) AS messages,
            (SELECT count(*) FROM events) AS events, (SELECT count(*) FROM spool) AS spool,
            (SELECT count(*) FROM checkpoints) AS checkpoints`,
  );
  return Object.fromEntries(Object.entries(rows[0]).map(([table, count]) => [table, Number(count)]));
}

module.exports = { DEFAULT_FILL, fillStore, rowCounts };
