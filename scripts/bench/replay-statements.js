/**
 * Replays the statements a goal ran (captured by ./timed-sql.js) under EXPLAIN (ANALYZE, BUFFERS):
 * PostgreSQL's own execution time and the buffer pages each statement touched. Pages do not depend on
 * how busy the machine is, so they show whether a statement's work grows with the tables even where
 * wall-clock times are noisy. Writes run in a transaction that is rolled back (a write of a key that
 * exists takes its ON CONFLICT path, on either store alike). Plain CommonJS, over a pg Client.
 */
'use strict';

const { statementKey } = require('./timed-sql');

const EXPLAINABLE = /^\s*(SELECT|INSERT|UPDATE|DELETE|WITH)\b/i;

/** Sums the figures of a plan's top node (its children's are included in it) and the statement. */
function figuresOf(explained) {
  const [result] = explained;
  const plan = result.Plan;
  return {
    executionMs: result['Execution Time'] ?? 0,
    planningMs: result['Planning Time'] ?? 0,
    pages: (plan['Shared Hit Blocks'] ?? 0) + (plan['Shared Read Blocks'] ?? 0),
  };
}

/**
 * Runs every explainable statement once under EXPLAIN ANALYZE on `client` (a connected pg Client)
 * and returns the totals (execution ms, planning ms, buffer pages, statements) and the same figures
 * per statement text (`byStatement`: key → { count, executionMs, pages }).
 */
async function replayOnce(client, statements) {
  const total = { executionMs: 0, planningMs: 0, pages: 0, statements: 0, byStatement: new Map() };
  for (const { text, params } of statements) {
    if (!EXPLAINABLE.test(text)) continue;
    await client.query('BEGIN');
    try {
      const { rows } = await client.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${text}`, params);
      const figures = figuresOf(rows[0]['QUERY PLAN']);
      total.executionMs += figures.executionMs;
      total.planningMs += figures.planningMs;
      total.pages += figures.pages;
      total.statements += 1;
      const key = statementKey(text);
      const entry = total.byStatement.get(key) ?? { count: 0, executionMs: 0, pages: 0 };
      entry.count += 1;
      entry.executionMs += figures.executionMs;
      entry.pages += figures.pages;
      total.byStatement.set(key, entry);
    } finally {
      await client.query('ROLLBACK');
    }
  }
  return total;
}

module.exports = { EXPLAINABLE, replayOnce };
