/**
 * The bytes of the images a request's messages name (`--image`), read from the store for each
 * request: the transcript and every Temporal payload carry only their ids.
 */
import type { StoredMessage } from '../core/messages';
import type { SessionStore } from '../store/types';
import type { ImageData } from './providers/types';

/** The images the messages name, by id; undefined when they name none (no read then). */
export async function requestImages(
  store: Pick<SessionStore, 'readImages'>,
  messages: readonly StoredMessage[],
): Promise<ReadonlyMap<number, ImageData> | undefined> {
  const ids = new Set<number>();
  for (const message of messages) {
    if (message.role !== 'user') continue;
    for (const part of message.content) if (part.type === 'image') ids.add(part.imageId);
  }
  if (ids.size === 0) return undefined;
  const rows = await store.readImages([...ids]);
  return new Map(rows.map((row) => [row.imageId, { mediaType: row.mediaType, data: row.data }]));
}
