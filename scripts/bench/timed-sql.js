/**
 * A goalrun SqlClient (store/sql.ts) that times and records what goes through it: the store time
 * of scripts/bench-store-scale.js and the statements test/store/store-scale-plans.test.ts EXPLAINs.
 *
 * Store time is measured where the activities wait for it: from the call into the client to its
 * answer, connection checkout, network and PostgreSQL's work included. Two figures:
 *   - `busyMs`: wall time during which at least one store call was in flight (overlapping calls,
 *     such as the model step's two reads in Promise.all, count once): what a step waits for;
 *   - `sumMs`: the sum of every call's duration.
 * A transaction is one call (BEGIN to COMMIT); its statements are also recorded one by one, for the
 * per-statement breakdown. Plain CommonJS, for the same reasons as ./store-fill.js.
 */
'use strict';

const { performance } = require('node:perf_hooks');

/** A statement's text with its whitespace collapsed: the key of the per-statement figures. */
function statementKey(text) {
  return text.replace(/\s+/g, ' ').trim();
}

/** Wraps `inner` (a SqlClient); `record.statements` keeps every statement with its parameters when `capture` is set. */
function timedSqlClient(inner, { capture = false } = {}) {
  const record = {
    calls: 0,
    busyMs: 0,
    sumMs: 0,
    /** statement key → { count, ms } */
    byStatement: new Map(),
    /** { text, params } of every statement, when capturing. */
    statements: [],
  };
  let inFlight = 0;
  let busySince = 0;

  const begin = () => {
    record.calls += 1;
    if (inFlight === 0) busySince = performance.now();
    inFlight += 1;
    return performance.now();
  };
  const end = (started) => {
    const now = performance.now();
    record.sumMs += now - started;
    inFlight -= 1;
    if (inFlight === 0) record.busyMs += now - busySince;
  };
  const note = (text, params, ms) => {
    const key = statementKey(text);
    const entry = record.byStatement.get(key) ?? { count: 0, ms: 0 };
    entry.count += 1;
    entry.ms += ms;
    record.byStatement.set(key, entry);
    if (capture) record.statements.push({ text, params: params ?? [] });
  };
  /** Times each statement of an executor (a transaction's, or the client's own). */
  const timedStatements = (executor) => ({
    async query(text, params) {
      const started = performance.now();
      try {
        return await executor.query(text, params);
      } finally {
        note(text, params, performance.now() - started);
      }
    },
    async exec(script) {
      const started = performance.now();
      try {
        return await executor.exec(script);
      } finally {
        note(script, [], performance.now() - started);
      }
    },
  });
  const direct = timedStatements(inner);

  const client = {
    record,
    async query(text, params) {
      const started = begin();
      try {
        return await direct.query(text, params);
      } finally {
        end(started);
      }
    },
    async exec(script) {
      const started = begin();
      try {
        return await direct.exec(script);
      } finally {
        end(started);
      }
    },
    async transaction(fn) {
      const started = begin();
      try {
        return await inner.transaction((tx) => fn(timedStatements(tx)));
      } finally {
        const ms = performance.now() - started;
        end(started);
        note('(transaction: BEGIN … COMMIT, statements included)', [], ms);
      }
    },
    close: () => inner.close(),
    /** Forgets everything recorded so far (not the calls in flight). */
    reset() {
      record.calls = 0;
      record.busyMs = 0;
      record.sumMs = 0;
      record.byStatement = new Map();
      record.statements = [];
    },
  };
  return client;
}

module.exports = { timedSqlClient, statementKey };
