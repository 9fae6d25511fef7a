import type { SqlClient, SqlExecutor } from './sql';

/** One schema change. Ids only grow; an applied migration is never edited, a new one is added. */
export interface Migration {
  id: number;
  name: string;
  sql: string;
}

/**
 * Key of the advisory lock that serializes migrations. Any fixed bigint works; this one spells "goal" in
 * ASCII, so it is unlikely to collide with another application's lock on a shared database.
 */
export const MIGRATION_LOCK_KEY = 0x676f616c;

/** The schema, in order. */
export const MIGRATIONS: readonly Migration[] = [
  {
    id: 1,
    name: 'session store',
    sql: `
CREATE TABLE sessions (
  id text PRIMARY KEY,
  project_dir text NOT NULL,
  project_hash text NOT NULL,
  objective text NOT NULL,
  status text NOT NULL DEFAULT 'running',
  reason text,
  model text NOT NULL,
  workflow_id text NOT NULL,
  goal_state jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sessions_workflow_id_idx ON sessions (workflow_id);
CREATE INDEX sessions_created_at_idx ON sessions (created_at DESC, id DESC);
CREATE INDEX sessions_project_hash_idx ON sessions (project_hash, created_at DESC);

-- seq is one global sequence: gaps between sessions do not matter, only the order within one.
CREATE TABLE messages (
  seq bigserial PRIMARY KEY,
  session_id text NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  key text NOT NULL,
  role text NOT NULL,
  content jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT messages_session_key_unique UNIQUE (session_id, key)
);
CREATE INDEX messages_session_seq_idx ON messages (session_id, seq);

-- key is nullable: NULLs never conflict, so unkeyed events can repeat.
CREATE TABLE events (
  id bigserial PRIMARY KEY,
  session_id text NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  kind text NOT NULL,
  key text,
  data jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT events_session_key_unique UNIQUE (session_id, key)
);
CREATE INDEX events_session_id_idx ON events (session_id, id);

CREATE TABLE spool (
  id bigserial PRIMARY KEY,
  session_id text NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  key text NOT NULL,
  tool_name text NOT NULL,
  content text NOT NULL,
  size_bytes bigint NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT spool_session_key_unique UNIQUE (session_id, key)
);

CREATE TABLE checkpoints (
  id bigserial PRIMARY KEY,
  session_id text NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  goal_state jsonb,
  tasks jsonb,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX checkpoints_session_id_idx ON checkpoints (session_id, id DESC);
`,
  },
  {
    id: 2,
    name: 'store identity',
    // One row, made once: a random id that tells this store apart from every other, so that its goals
    // get a task queue of their own (two stores never share workers). The CHECK keeps it to one row.
    sql: `
CREATE TABLE goalrun_store (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  store_id text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO goalrun_store (store_id) VALUES (replace(gen_random_uuid()::text, '-', ''));
`,
  },
  {
    id: 3,
    name: 'message facts and session names',
    sql: `
-- Facts beside a message that the model is not shown (usage, a tool output's stub facts, a steering
-- message's sender): stubs are rendered from them, so a step never re-reads the spool.
ALTER TABLE messages ADD COLUMN meta jsonb;
-- The name given with /rename.
ALTER TABLE sessions ADD COLUMN name text;
`,
  },
  {
    id: 4,
    name: 'row estimates for the session being written',
    // Issue 20, §4 (test/store/store-scale-plans.test.ts). The session a goal is writing is newer than
    // the table statistics. Where the store holds at most ~100 sessions, ANALYZE keeps every one of
    // them as a most-common value, so the planner estimates one row for any other session id: a
    // lookup by (session_id, key) then ties between the unique index and (session_id, seq|id), and
    // the tie can go to the latter, which reads the whole session and filters on the key (161 pages
    // instead of 3 for an event of a 1,000-event session). With one most-common value kept, an
    // unknown session is estimated at its share of the table, and the unique index wins.
    sql: `
ALTER TABLE messages ALTER COLUMN session_id SET STATISTICS 1;
ALTER TABLE events ALTER COLUMN session_id SET STATISTICS 1;
ANALYZE messages, events;
`,
  },
  {
    id: 5,
    name: 'workspace contexts',
    // What the tool host gathered for one execution of a session (environment snapshot, project
    // instructions, MCP tools): written before the session row exists (the snapshot goes into the
    // first message), so no foreign key; deleteSession removes the rows itself.
    sql: `
CREATE TABLE workspace_contexts (
  session_id text NOT NULL,
  execution integer NOT NULL,
  data jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (session_id, execution)
);
`,
  },
  {
    id: 6,
    name: 'session names unique per project, and one operation per session',
    // Issue 17 (F-SESSION). Names given with /rename before this migration may repeat within a project:
    // the newest session keeps the name, an older one gets its id appended, so the unique index builds.
    // session_locks holds one row per session while a CLI operation (start, resume, fork, clean) runs
    // on it; expires_at lets a crashed holder's lock lapse (store/session-locks.ts).
    sql: `
UPDATE sessions s SET name = s.name || ' (' || s.id || ')'
WHERE s.name IS NOT NULL AND EXISTS (
  SELECT 1 FROM sessions o
  WHERE o.project_hash = s.project_hash AND o.name = s.name AND (o.created_at, o.id) > (s.created_at, s.id)
);
CREATE UNIQUE INDEX sessions_project_name_unique ON sessions (project_hash, name) WHERE name IS NOT NULL;
CREATE TABLE session_locks (
  session_id text PRIMARY KEY,
  operation text NOT NULL,
  holder text NOT NULL,
  acquired_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL
);
`,
  },
  {
    id: 7,
    name: 'full-text memory over messages',
    // Issue 17 (F-MEMORY). The index is over a generated column of the stored messages themselves (their text
    // parts, tool-call arguments and tool results, summaries included), so there is no second copy
    // of the transcript, and it covers the rows that exist when it is created. What tools returned
    // was redacted before it was stored, so the index holds the redacted text. The text is cut at
    // 100,000 characters: a tsvector has a 1 MB ceiling, and a message must never fail to store
    // because of its index. Both functions are IMMUTABLE with a fixed text search configuration,
    // which a generated column needs.
    sql: `
CREATE FUNCTION goalrun_message_text(content jsonb) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
  SELECT left(coalesce(string_agg(part #>> '{}', ' '), ''), 100000)
  FROM (
    SELECT jsonb_path_query(content, 'lax $[*].text') AS part
    UNION ALL SELECT jsonb_path_query(content, 'lax $[*].output.value')
    UNION ALL SELECT jsonb_path_query(content, 'lax $[*] ? (@.type == "tool-call").input.** ? (@.type() == "string")')
  ) parts
$fn$;
CREATE FUNCTION goalrun_message_tsv(content jsonb) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
  SELECT to_tsvector('english'::regconfig, goalrun_message_text(content))
$fn$;
-- Stored, not only indexed: ranking reads each match's tsvector, and recomputing it from the jsonb
-- took seconds for a common word over 100,000 messages (scripts/bench-memory-search.js).
ALTER TABLE messages ADD COLUMN search_tsv tsvector GENERATED ALWAYS AS (goalrun_message_tsv(content)) STORED;
CREATE INDEX messages_memory_idx ON messages USING gin (search_tsv);
`,
  },
  {
    id: 8,
    name: 'cleaned sessions',
    // Issue 17 (retention). `goalrun clean` removes a session's messages, events, spool rows,
    // checkpoints and workspace contexts, and keeps its catalog row as a marker with the time it was
    // cleaned, so `status` can say so instead of "no such goal".
    sql: `
ALTER TABLE sessions ADD COLUMN cleaned_at timestamptz;
`,
  },
  {
    id: 9,
    name: 'daily budget',
    // Issue 18 item 4: one money budget per UTC day over every goal of the store. The single budget
    // row is what reservations lock (SELECT ... FOR UPDATE), so two workers never both take the last
    // dollar; each model call's reservation is a ledger row, settled with the reported cost.
    sql: `
CREATE TABLE daily_budget (
  id boolean PRIMARY KEY DEFAULT true CHECK (id),
  cap_usd double precision CHECK (cap_usd IS NULL OR cap_usd >= 0),
  updated_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO daily_budget (id, cap_usd) VALUES (true, NULL);
CREATE TABLE daily_spend (
  id bigserial PRIMARY KEY,
  day date NOT NULL,
  session_id text NOT NULL,
  model text NOT NULL,
  reserved_usd double precision NOT NULL,
  cost_usd double precision,
  created_at timestamptz NOT NULL DEFAULT now(),
  settled_at timestamptz
);
CREATE INDEX daily_spend_day_idx ON daily_spend (day);
`,
  },
  {
    id: 10,
    name: 'paid calls',
    // Issue 24 item 4 and issue 26 item 5: every paid call records its own cost in the daily ledger,
    // with or without a daily cap (an answered step, a summary, and an attempt the provider billed
    // without an answer the goal used), keyed so that a retried write records it once. A daily
    // reservation is then only a hold, released after its step. The usage of a billed attempt is
    // kept, so the workflow can count it in the goal's tokens too (store/paid-calls.ts).
    sql: `
ALTER TABLE daily_spend ADD COLUMN key text;
ALTER TABLE daily_spend ADD COLUMN kind text NOT NULL DEFAULT 'reservation';
ALTER TABLE daily_spend ADD COLUMN usage jsonb;
ALTER TABLE daily_spend ADD COLUMN at_reservation boolean NOT NULL DEFAULT false;
CREATE UNIQUE INDEX daily_spend_key_idx ON daily_spend (session_id, key) WHERE key IS NOT NULL;
`,
  },
  {
    id: 11,
    name: 'memory search over identifiers',
    // Issue 26 item 3: the English parser reads `notes.txt` as one host name and `ZEBRA-4411` as a
    // word and a negative number, so `search notes` missed a file name and highlights cut an
    // identifier in two. The index now holds the text with every character that is neither a letter,
    // a digit nor white space turned into a space (one character for one, so offsets still line up
    // with the original for excerpts); a query is rewritten the same way (core/search-text.ts).
    sql: `
DROP INDEX messages_memory_idx;
ALTER TABLE messages DROP COLUMN search_tsv;
CREATE FUNCTION goalrun_search_text(content jsonb) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
  SELECT regexp_replace(goalrun_message_text(content), '[^[:alnum:][:space:]]', ' ', 'g')
$fn$;
CREATE OR REPLACE FUNCTION goalrun_message_tsv(content jsonb) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
  SELECT to_tsvector('english'::regconfig, goalrun_search_text(content))
$fn$;
ALTER TABLE messages ADD COLUMN search_tsv tsvector GENERATED ALWAYS AS (goalrun_message_tsv(content)) STORED;
CREATE INDEX messages_memory_idx ON messages USING gin (search_tsv);
`,
  },
  {
    id: 12,
    name: 'partial messages and images',
    // Issue 26 item 11. `--include-partial-messages`: a model step that someone streams (a lease in
    // stream_watchers, renewed by the CLI that prints the stream) writes its text as it arrives, in
    // throttled pieces, for that CLI to print. The pieces are best-effort and short-lived (pruned after
    // a while; never part of the transcript: the stored answer stays the source of truth). `--image`:
    // the CLI stores each image before the goal starts (so no Temporal payload carries it) and the
    // first message names it by id. None of them references sessions: all are written before the
    // session row exists (as workspace_contexts is).
    sql: `
CREATE TABLE stream_watchers (
  session_id text PRIMARY KEY,
  until timestamptz NOT NULL
);
CREATE TABLE stream_deltas (
  id bigserial PRIMARY KEY,
  session_id text NOT NULL,
  execution integer NOT NULL,
  step integer NOT NULL,
  attempt integer NOT NULL,
  seq integer NOT NULL,
  text_offset integer NOT NULL,
  text text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (session_id, execution, step, attempt, seq)
);
CREATE INDEX stream_deltas_age_idx ON stream_deltas (session_id, created_at);
CREATE TABLE images (
  id bigserial PRIMARY KEY,
  session_id text NOT NULL,
  media_type text NOT NULL,
  bytes integer NOT NULL,
  sha256 text NOT NULL,
  data bytea NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX images_session_idx ON images (session_id);
`,
  },
];

const CREATE_MIGRATIONS_TABLE = `
CREATE TABLE IF NOT EXISTS goalrun_migrations (
  id integer PRIMARY KEY,
  name text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
)`;

/**
 * Applies the pending migrations, each in its own transaction. Every transaction first takes a
 * transaction-scoped advisory lock, so processes that start at once queue up, and the one that gets
 * the lock second sees the first one's work and skips it. Returns the ids it applied.
 */
export async function migrate(
  client: SqlClient,
  migrations: readonly Migration[] = MIGRATIONS,
): Promise<number[]> {
  const applied = await client.transaction(async (tx) => {
    await lockMigrations(tx);
    // Created under the lock: two concurrent CREATE TABLE IF NOT EXISTS can still collide in PostgreSQL.
    await tx.exec(CREATE_MIGRATIONS_TABLE);
    return appliedIds(tx);
  });
  const done: number[] = [];
  for (const migration of [...migrations].sort((a, b) => a.id - b.id)) {
    if (applied.has(migration.id)) continue;
    const ran = await client.transaction(async (tx) => {
      await lockMigrations(tx);
      if ((await appliedIds(tx)).has(migration.id)) return false;
      await tx.exec(migration.sql);
      await tx.query('INSERT INTO goalrun_migrations (id, name) VALUES ($1, $2)', [
        migration.id,
        migration.name,
      ]);
      return true;
    });
    if (ran) done.push(migration.id);
  }
  return done;
}

async function lockMigrations(tx: SqlExecutor): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
}

async function appliedIds(tx: SqlExecutor): Promise<Set<number>> {
  const { rows } = await tx.query<{ id: number }>('SELECT id FROM goalrun_migrations');
  return new Set(rows.map((row) => Number(row.id)));
}
