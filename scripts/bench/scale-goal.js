/**
 * The goal scripts/bench-store-scale.js and test/store/store-scale-plans.test.ts run: a scripted
 * model of a few dozen steps that uses the tools a real goal uses (todo-write, file-write, file-read,
 * file-edit, bash with a spooled output, tool-output reading it back, glob, grep), with one
 * auto-compaction on the way, then `finish`. Plain CommonJS over dist/.
 */
'use strict';

const fs = require('node:fs');
const path = require('node:path');

/** The goal's context window: small, so that the usage of the compaction turn crosses the threshold. */
const CONTEXT_WINDOW_TOKENS = 16_000;
/** Usage of an ordinary turn, and of the turn after which auto-compaction runs. */
const USAGE = { input: 2_000, output: 60 };
const COMPACTING_USAGE = { input: 15_000, output: 60 };

/** The step whose bash output is the goal's first spooled one (see the cycle below). */
const FIRST_SPOOLED_STEP = 6;

/**
 * The tool call of step n (1-based) of a goal of `steps` steps; the last step calls finish. The step
 * after the first spooled output reads it back with tool-output, when its spool id is known.
 */
function callOf(n, steps, spoolId) {
  if (n === steps) return { name: 'finish', args: { status: 'complete', summary: 'benchmark done' } };
  if (n === FIRST_SPOOLED_STEP + 1 && spoolId !== undefined) {
    return { name: 'tool-output', args: { id: `spool:${spoolId}`, offset: 100, limit: 2000 } };
  }
  if (n === 1) {
    return {
      name: 'todo-write',
      args: {
        todos: [
          { id: 'task-1', content: 'write the notes', status: 'in_progress' },
          { id: 'task-2', content: 'check the numbers', status: 'pending', dependencies: ['task-1'] },
        ],
      },
    };
  }
  if (n === 2) return { name: 'file-write', args: { path: 'notes.md', content: 'line 0\n' } };
  const cycle = [
    () => ({ name: 'bash', args: { command: `echo step ${n} >> log.txt && wc -l log.txt` } }),
    () => ({ name: 'file-read', args: { path: 'notes.md' } }),
    () => ({
      name: 'file-edit',
      args: { path: 'notes.md', old_string: 'line 0', new_string: 'line 0\nline 0b' },
    }),
    // Over the spool threshold: spooled, truncated for the model.
    () => ({ name: 'bash', args: { command: 'seq 1 3000' } }),
    () => ({ name: 'glob', args: { pattern: '**/*.md' } }),
    () => ({ name: 'grep', args: { pattern: 'line', path: '.' } }),
    () => ({
      name: 'todo-write',
      args: { merge: true, todos: [{ id: 'task-1', content: 'write the notes', status: 'completed' }] },
    }),
  ];
  return cycle[(n - 3) % cycle.length]();
}

/**
 * Writes the script of a `steps`-step goal into `dir`; returns its `scripted:` model spec. `spoolId`:
 * the id the goal's first spooled output will get (the spool sequence's next value, when only this
 * goal writes to the store meanwhile).
 */
function writeScaleScript(dir, steps, spoolId) {
  const compactAfter = Math.floor(steps / 2);
  const turns = [];
  for (let n = 1; n <= steps; n++) {
    turns.push({
      toolCalls: [callOf(n, steps, spoolId)],
      usage: n === compactAfter ? COMPACTING_USAGE : USAGE,
    });
  }
  const file = path.join(dir, `scale-turns-${steps}.json`);
  fs.writeFileSync(file, JSON.stringify({ turns }));
  return `scripted:${file}`;
}

/** The id the next spool row of a store will get (a pg client or goalrun SqlClient's `query`). */
async function nextSpoolId(db) {
  const { rows } = await db.query('SELECT last_value, is_called FROM spool_id_seq');
  return rows[0].is_called ? Number(rows[0].last_value) + 1 : Number(rows[0].last_value);
}

module.exports = { CONTEXT_WINDOW_TOKENS, FIRST_SPOOLED_STEP, nextSpoolId, writeScaleScript };
