/**
 * The last N bytes of a stream, addressed by absolute offsets (bytes since the stream began), so a
 * reader can continue from where it stopped even after older bytes were dropped.
 */

/** A byte slice of a ring buffer. */
export interface RingSlice {
  /** Absolute offset of the first returned byte (later than asked when those bytes were dropped). */
  offset: number;
  bytes: Buffer;
  /** Bytes between the asked offset and `offset` that were dropped before anyone read them. */
  dropped: number;
}

/** A fixed-capacity ring of bytes; the oldest bytes are dropped when it is full. */
export class ByteRing {
  private readonly buffer: Buffer;
  private written = 0;

  constructor(readonly capacity: number) {
    if (!Number.isSafeInteger(capacity) || capacity < 1)
      throw new RangeError(`ring capacity must be >= 1, got ${capacity}`);
    this.buffer = Buffer.alloc(capacity);
  }

  /** Absolute offset just past the newest byte: every byte ever written. */
  get end(): number {
    return this.written;
  }

  /** Absolute offset of the oldest byte still kept. */
  get start(): number {
    return Math.max(0, this.written - this.capacity);
  }

  /** Appends a chunk; bytes beyond the capacity push out the oldest. */
  push(chunk: Uint8Array): void {
    let data = chunk;
    if (data.length > this.capacity) {
      this.written += data.length - this.capacity;
      data = data.subarray(data.length - this.capacity);
    }
    const at = this.written % this.capacity;
    const first = Math.min(data.length, this.capacity - at);
    this.buffer.set(data.subarray(0, first), at);
    if (first < data.length) this.buffer.set(data.subarray(first), 0);
    this.written += data.length;
  }

  /** The byte at an absolute offset that is still kept. */
  byteAt(offset: number): number {
    return this.buffer[offset % this.capacity];
  }

  /** Up to `limit` bytes from `offset`; an offset before `start` reads from `start` and reports the gap. */
  read(offset: number, limit: number): RingSlice {
    if (!Number.isSafeInteger(offset) || offset < 0)
      throw new RangeError(`offset must be >= 0, got ${offset}`);
    const from = Math.min(Math.max(offset, this.start), this.end);
    const to = Math.min(this.end, from + Math.max(0, limit));
    const out = Buffer.alloc(to - from);
    for (let copied = 0; copied < out.length; ) {
      const at = (from + copied) % this.capacity;
      const run = Math.min(out.length - copied, this.capacity - at);
      this.buffer.copy(out, copied, at, at + run);
      copied += run;
    }
    return { offset: from, bytes: out, dropped: Math.max(0, from - offset) };
  }
}

function isContinuationByte(byte: number): boolean {
  // UTF-8 continuation bytes are 10xxxxxx.
  return (byte & 0xc0) === 0x80;
}

/** Longest UTF-8 sequence: a character boundary is at most this many bytes away. */
const MAX_UTF8_BYTES = 4;

/**
 * A text page of a ring at character boundaries: a start inside a character moves forward to the
 * next one, an end inside one moves back before it (that character comes whole in the next page,
 * once all of it is written), so following `next` from 0 never splits a character.
 */
export function readRingText(
  ring: ByteRing,
  offset: number,
  limit: number,
): { offset: number; next: number; text: string; dropped: number } {
  const slice = ring.read(offset, limit);
  let start = slice.offset;
  let end = slice.offset + slice.bytes.length;
  // Within a page, bytes are addressed relative to the slice.
  const at = (position: number) => slice.bytes[position - slice.offset];
  let skipped = 0;
  while (start < end && skipped < MAX_UTF8_BYTES && isContinuationByte(at(start))) {
    start++;
    skipped++;
  }
  if (end > start) {
    // Find the lead byte of the last character and check that the character is complete.
    let lead = end - 1;
    while (lead > start && end - lead < MAX_UTF8_BYTES && isContinuationByte(at(lead))) lead--;
    const byte = at(lead);
    const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    if (lead + length > end && lead > start) end = lead;
  }
  return {
    offset: start,
    next: end,
    text: slice.bytes.subarray(start - slice.offset, end - slice.offset).toString('utf8'),
    dropped: slice.dropped + (start - slice.offset),
  };
}
