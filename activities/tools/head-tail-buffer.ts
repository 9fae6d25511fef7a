/**
 * Keeps a bounded amount of a stream's bytes: the head and the tail, because the start of a
 * command's output says what ran and the end says how it finished.
 */

/** Collects chunks, keeping at most `capBytes` (half head, half tail) and counting the rest. */
export class HeadTailBuffer {
  private readonly headCap: number;
  private readonly tailCap: number;
  private readonly head: Buffer[] = [];
  private headBytes = 0;
  private tail: Buffer[] = [];
  private tailBytes = 0;
  private total = 0;

  constructor(readonly capBytes: number) {
    this.headCap = Math.ceil(capBytes / 2);
    this.tailCap = capBytes - this.headCap;
  }

  /** Bytes seen so far, kept or not. */
  get totalBytes(): number {
    return this.total;
  }

  /** Bytes seen but not kept. */
  get droppedBytes(): number {
    return this.total - this.headBytes - this.tailBytes;
  }

  /** Adds a chunk. */
  push(chunk: Buffer): void {
    this.total += chunk.length;
    let rest = chunk;
    if (this.headBytes < this.headCap) {
      const take = Math.min(this.headCap - this.headBytes, rest.length);
      this.head.push(rest.subarray(0, take));
      this.headBytes += take;
      rest = rest.subarray(take);
    }
    if (rest.length === 0 || this.tailCap === 0) return;
    if (rest.length >= this.tailCap) {
      // Copy so the kept slice does not pin a large chunk in memory.
      this.tail = [Buffer.from(rest.subarray(rest.length - this.tailCap))];
      this.tailBytes = this.tailCap;
      return;
    }
    this.tail.push(rest);
    this.tailBytes += rest.length;
    while (this.tailBytes > this.tailCap) {
      const first = this.tail[0];
      const excess = this.tailBytes - this.tailCap;
      if (first.length <= excess) {
        this.tail.shift();
        this.tailBytes -= first.length;
      } else {
        this.tail[0] = first.subarray(excess);
        this.tailBytes -= excess;
      }
    }
  }

  /** The kept text; when bytes were dropped, head and tail are joined by a line saying how many. */
  text(): string {
    const head = Buffer.concat(this.head).toString('utf8');
    const tail = Buffer.concat(this.tail).toString('utf8');
    const dropped = this.droppedBytes;
    if (dropped === 0) return head + tail;
    const headEnd = head.endsWith('\n') ? '' : '\n';
    return `${head}${headEnd}[... ${dropped} bytes of output dropped ...]\n${tail}`;
  }
}
