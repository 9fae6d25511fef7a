/**
 * Full-text memory over past sessions (issue 17, F-MEMORY): a query against the GIN index of
 * migration 7 (rebuilt by migration 11 to split identifiers into their words) over the stored
 * messages' generated search_tsv column. Ranked with ts_rank_cd; snippets (ts_headline) are made
 * only for the rows returned, in an outer query, since they re-read each message's text.
 */
import { excerptOf, HEADLINE_START, HEADLINE_STOP, searchQueryText } from '../core/search-text';
import type { SqlExecutor } from './sql';

/**
 * ts_headline marks every matched word of the split text; the excerpt is then cut from the original
 * text in core/search-text.ts, so a highlight covers a whole token and no token is cut.
 */
const HEADLINE_OPTIONS = `HighlightAll=true, StartSel=${HEADLINE_START}, StopSel=${HEADLINE_STOP}`;

/** One message that matched a memory search. */
export interface MemoryMatch {
  sessionId: string;
  sessionName: string | null;
  /** The model step the message belongs to (the newest step at or before it); 0 before the first. */
  step: number;
  seq: number;
  role: string;
  createdAt: Date;
  rank: number;
  snippet: string;
}

/** What to search and where. */
export interface MemoryQuery {
  text: string;
  /** Only sessions of these project hashes; null searches every project. */
  projectHashes: string[] | null;
  /** A session left out (the one asking: its messages are already in its context). */
  excludeSessionId?: string;
  limit: number;
}

interface MatchRecord {
  session_id: string;
  name: string | null;
  seq: string | number;
  role: string;
  created_at: Date;
  rank: number;
  text: string;
  headline: string;
  step: number | null;
}

/** The best matches, highest rank first (newest first on ties). */
export async function searchMemory(db: SqlExecutor, query: MemoryQuery): Promise<MemoryMatch[]> {
  const { rows } = await db.query<MatchRecord>(
    `WITH q AS (SELECT websearch_to_tsquery('english', $1) AS query),
     hits AS (
       SELECT m.session_id, s.name, m.seq, m.role, m.created_at, m.content,
              ts_rank_cd(m.search_tsv, q.query) AS rank
       FROM messages m JOIN sessions s ON s.id = m.session_id, q
       WHERE m.search_tsv @@ q.query
         AND ($2::text[] IS NULL OR s.project_hash = ANY($2::text[]))
         AND ($3::text IS NULL OR m.session_id <> $3::text)
       ORDER BY rank DESC, m.seq DESC
       LIMIT $4
     )
     SELECT h.session_id, h.name, h.seq, h.role, h.created_at, h.rank,
            goalrun_message_text(h.content) AS text,
            ts_headline('english', goalrun_search_text(h.content), q.query, $5) AS headline,
            (SELECT substring(p.key from '^step:(\\d+)')::int FROM messages p
              WHERE p.session_id = h.session_id AND p.seq <= h.seq AND p.key LIKE 'step:%'
              ORDER BY p.seq DESC LIMIT 1) AS step
     FROM hits h, q
     ORDER BY h.rank DESC, h.seq DESC`,
    [
      searchQueryText(query.text),
      query.projectHashes,
      query.excludeSessionId ?? null,
      query.limit,
      HEADLINE_OPTIONS,
    ],
  );
  return rows.map((row) => ({
    sessionId: row.session_id,
    sessionName: row.name,
    step: row.step ?? 0,
    seq: Number(row.seq),
    role: row.role,
    createdAt: row.created_at,
    rank: Number(row.rank),
    snippet: excerptOf(row.text, row.headline),
  }));
}

/** Input and output tokens of the session's newest model request, or null before its first. */
export async function latestRequestTokens(db: SqlExecutor, sessionId: string): Promise<number | null> {
  const { rows } = await db.query<{ input: string | null; output: string | null }>(
    `SELECT meta->'usage'->>'inputTokens' AS input, meta->'usage'->>'outputTokens' AS output
     FROM messages WHERE session_id = $1 AND role = 'assistant' ORDER BY seq DESC LIMIT 1`,
    [sessionId],
  );
  if (rows.length === 0 || rows[0].input === null) return null;
  return Number(rows[0].input) + Number(rows[0].output ?? 0);
}
