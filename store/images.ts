/**
 * Images given with `--image` (issue 26 item 11): stored by the CLI before the goal starts, so that
 * no Temporal payload carries them; the first message names each by id, and the model step reads
 * the bytes back when it builds a request. Written before the session row exists (no foreign key).
 */
import { createHash } from 'node:crypto';
import type { SqlExecutor } from './sql';

/** A stored image's reference, as the first message carries it. */
export interface StoredImageRef {
  imageId: number;
  mediaType: string;
  bytes: number;
}

/** A stored image with its bytes. */
export interface StoredImage extends StoredImageRef {
  data: Uint8Array;
}

/** Stores one image of a session and returns its reference. */
export async function insertImage(
  db: SqlExecutor,
  sessionId: string,
  image: { mediaType: string; data: Uint8Array },
): Promise<StoredImageRef> {
  const sha256 = createHash('sha256').update(image.data).digest('hex');
  const { rows } = await db.query<{ id: string | number }>(
    `INSERT INTO images (session_id, media_type, bytes, sha256, data) VALUES ($1, $2, $3, $4, $5)
     RETURNING id`,
    [sessionId, image.mediaType, image.data.length, sha256, Buffer.from(image.data)],
  );
  return { imageId: Number(rows[0].id), mediaType: image.mediaType, bytes: image.data.length };
}

/**
 * The images with these ids that are still stored. By id alone: a fork's copy of the first message
 * names its parent's images (they go when the parent is deleted or cleaned).
 */
export async function readImages(db: SqlExecutor, ids: number[]): Promise<StoredImage[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<{ id: string | number; media_type: string; bytes: number; data: Buffer }>(
    'SELECT id, media_type, bytes, data FROM images WHERE id = ANY($1::bigint[])',
    [ids],
  );
  return rows.map((row) => ({
    imageId: Number(row.id),
    mediaType: row.media_type,
    bytes: row.bytes,
    data: new Uint8Array(row.data),
  }));
}
