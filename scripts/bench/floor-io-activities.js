/**
 * The activities of the concurrency benchmark's I/O floor (`--floor-io`): the least I/O a goal step
 * cannot avoid, with nothing of goalrun. The model activity sends the bench model one streamed
 * chat request over HTTP, reads and parses its server-sent events, and writes the answer as one row;
 * the tool activity reads the step's small file and writes its content as one row. So the floor
 * pays for a request, a parse and two writes per step, as a goal does, and the difference left
 * between a goal and this floor is goalrun's own work (the prompt, the session, the events, the
 * workflow's state), not the I/O.
 */
'use strict';

const fs = require('node:fs/promises');
const path = require('node:path');
const { noteName } = require('./cheap-calls');

const TABLE = 'bench_floor_rows';
// Beside the floor's one `model` activity at a time per workflow; the goal worker's store pool is 10 too.
const POOL_SIZE = 10;
// One tool offered, as small as the bench model's cheap call needs: the floor asks for the same answer.
const TOOLS = [
  {
    type: 'function',
    function: {
      name: 'file-read',
      description: 'Read a file',
      parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    },
  },
];

/** Reads an SSE body: the `data:` events as parsed JSON, `[DONE]` left out. */
function parseEvents(text) {
  const events = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('data:')) continue;
    const data = line.slice('data:'.length).trim();
    if (data !== '' && data !== '[DONE]') events.push(JSON.parse(data));
  }
  return events;
}

/** The streamed answer's text and tool calls, assembled from its chunks as a client does. */
function assemble(events) {
  let text = '';
  const calls = [];
  for (const event of events) {
    const delta = event.choices?.[0]?.delta ?? {};
    if (delta.content) text += delta.content;
    for (const call of delta.tool_calls ?? []) {
      const index = call.index ?? 0;
      calls[index] ??= { name: '', arguments: '' };
      const slot = calls[index];
      if (call.function?.name) slot.name += call.function.name;
      if (call.function?.arguments) slot.arguments += call.function.arguments;
    }
  }
  return {
    text,
    calls: calls.map((call) => ({ name: call.name, args: JSON.parse(call.arguments || '{}') })),
  };
}

/**
 * The I/O floor's activities against the bench model at `modelUrl` (ending in /v1), the database at
 * `databaseUrl` and the notes in `workspace`. Call `close()` when the worker stops.
 */
async function createFloorIoActivities({ modelUrl, databaseUrl, workspace }) {
  const pg = require('pg');
  const pool = new pg.Pool({ connectionString: databaseUrl, max: POOL_SIZE });
  await pool.query(
    `CREATE TABLE IF NOT EXISTS ${TABLE} (workflow_id text, step int, kind text, body jsonb,
       PRIMARY KEY (workflow_id, step, kind))`,
  );
  // A retried activity writes nothing twice, as goalrun's writes are keyed.
  const write = (workflowId, step, kind, body) =>
    pool.query(
      `INSERT INTO ${TABLE} (workflow_id, step, kind, body) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`,
      [workflowId, step, kind, JSON.stringify(body)],
    );

  return {
    activities: {
      /** Step `step`'s model call: the bench model answers its step from the assistant turns sent. */
      async modelIo(workflowId, step) {
        const messages = [{ role: 'user', content: 'benchmark: a few cheap tool calls, then finish' }];
        for (let n = 1; n < step; n++) messages.push({ role: 'assistant', content: `step ${n}` });
        const response = await fetch(`${modelUrl}/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'bench-model', stream: true, messages, tools: TOOLS }),
        });
        if (!response.ok) throw new Error(`bench model answered ${response.status}`);
        const answer = assemble(parseEvents(await response.text()));
        await write(workflowId, step, 'answer', answer);
        return answer.calls.length;
      },
      /** Step `step`'s tool call: reads the step's note and stores what it read. */
      async toolIo(workflowId, step) {
        const content = await fs.readFile(path.join(workspace, noteName(step)), 'utf8');
        await write(workflowId, step, 'tool', { content });
      },
    },
    close: () => pool.end(),
  };
}

/** How many rows the I/O floor wrote for these workflows. */
async function countFloorRows(databaseUrl, workflowIds) {
  const pg = require('pg');
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    const { rows } = await db.query(`SELECT count(*)::int AS n FROM ${TABLE} WHERE workflow_id = ANY($1)`, [
      workflowIds,
    ]);
    return rows[0].n;
  } finally {
    await db.end();
  }
}

module.exports = { createFloorIoActivities, countFloorRows, assemble, parseEvents };
