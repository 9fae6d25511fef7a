/** Reading a spooled tool output by byte offset, cut at UTF-8 character boundaries (spec S-SPOOL). */
import type { SqlExecutor } from './sql';
import type { SpoolPage } from './types';

/** A UTF-8 character is at most 4 bytes, so a character boundary is at most 3 bytes before any position. */
const MAX_UTF8_CONTINUATION_BYTES = 3;

interface SpoolSliceRecord {
  id: string | number;
  tool_name: string;
  size_bytes: string | number;
  // bytea: a Buffer from pg.
  chunk: Uint8Array | null;
}

function isContinuationByte(byte: number | undefined): boolean {
  // UTF-8 continuation bytes are 10xxxxxx.
  return byte !== undefined && (byte & 0xc0) === 0x80;
}

/**
 * A page of a spooled output. Pages are cut at UTF-8 character boundaries: a start inside a character
 * moves back to its first byte, an end inside one moves back before it, so following `nextOffset`
 * from 0 yields pages that concatenate to the exact original. When `limit` is smaller than the
 * character at the start, the page holds that one character (up to 4 bytes) so that paging always advances.
 */
export async function readSpoolPage(
  db: SqlExecutor,
  sessionId: string,
  spoolId: number,
  offset: number,
  limit: number,
): Promise<SpoolPage | null> {
  if (!Number.isSafeInteger(offset) || offset < 0)
    throw new RangeError(`Spool offset must be >= 0, got ${offset}`);
  if (!Number.isSafeInteger(limit) || limit < 1)
    throw new RangeError(`Spool limit must be >= 1, got ${limit}`);
  // Fetch only the bytes around the page, plus margins to find character boundaries on both sides.
  const windowStart = Math.max(0, offset - MAX_UTF8_CONTINUATION_BYTES);
  const windowEnd = offset + Math.max(limit, MAX_UTF8_CONTINUATION_BYTES + 1) + 1;
  const { rows } = await db.query<SpoolSliceRecord>(
    `SELECT id, tool_name, size_bytes,
            substring(convert_to(content, 'UTF8') FROM $3::integer FOR $4::integer) AS chunk
     FROM spool WHERE id = $1 AND session_id = $2`,
    [spoolId, sessionId, windowStart + 1, windowEnd - windowStart],
  );
  if (rows.length === 0) return null;
  const row = rows[0];
  const size = Number(row.size_bytes);
  const bytes = Buffer.from(row.chunk ?? new Uint8Array());
  const page = { spoolId: Number(row.id), toolName: row.tool_name, size };
  if (offset >= size) return { ...page, offset: size, content: '', nextOffset: null };

  const byteAt = (position: number) => bytes[position - windowStart];
  let start = offset;
  while (start > 0 && isContinuationByte(byteAt(start))) start--;
  let end = Math.min(size, start + limit);
  while (end > start && end < size && isContinuationByte(byteAt(end))) end--;
  if (end === start) {
    end = start + 1;
    while (end < size && isContinuationByte(byteAt(end))) end++;
  }
  return {
    ...page,
    offset: start,
    content: bytes.subarray(start - windowStart, end - windowStart).toString('utf8'),
    nextOffset: end < size ? end : null,
  };
}
