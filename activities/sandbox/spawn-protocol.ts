/**
 * The framing between the worker and its spawn server (spawn-server.ts): over the server's stdin and
 * stdout, each frame is its length (4 bytes, big-endian, counting what follows), its type (1 byte),
 * the call it belongs to (4 bytes) and its payload: JSON for requests and replies, raw bytes for
 * output and input. Imports nothing heavier than Node's Buffer: the server loads this and nothing else.
 */

/** What a frame carries. */
export const FRAME = {
  // worker → server
  /** Start a process: JSON {@link SpawnRequest}. */
  spawn: 1,
  /** Bytes for the process's stdin. */
  stdin: 2,
  /** Close the process's stdin. */
  stdinEnd: 3,
  /** Stop reading the process's output (an escaped grandchild may hold the pipes open). */
  detach: 4,
  // server → worker
  /** The server is up (call id 0): a call it never acknowledged was never started. */
  ready: 9,
  /** The process started: JSON `{ pid }`. */
  spawned: 10,
  /** The process could not start: JSON `{ message }`. */
  error: 11,
  /** Output on stdout, stderr, or bwrap's info fd (fd 3). */
  stdout: 12,
  stderr: 13,
  info: 14,
  /** One output stream ended: payload one byte, 1 stdout, 2 stderr, 3 info. */
  streamEnd: 15,
  /** The process exited: JSON `{ code, signal }`. */
  exit: 16,
  /** Its output streams are all closed: the call is over. */
  close: 17,
} as const;

/** A frame type. */
export type FrameType = (typeof FRAME)[keyof typeof FRAME];

/** The stream numbers of {@link FRAME.streamEnd}, by output frame type. */
export const STREAM_NUMBER = { [FRAME.stdout]: 1, [FRAME.stderr]: 2, [FRAME.info]: 3 } as const;

/** What the worker asks the server to start: exactly what it would pass to `spawn`. */
export interface SpawnRequest {
  file: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  /** Whether the process gets a stdin pipe (else /dev/null). */
  stdin: boolean;
  /** Whether fd 3 is a pipe (bwrap's `--info-fd`). */
  infoFd: boolean;
}

const HEADER_BYTES = 4;
const TYPE_AND_ID_BYTES = 5;
/** A frame longer than this is a broken stream, not a message. */
const MAX_FRAME_BYTES = 64 * 1024 * 1024;

/** One frame, ready to write. */
export function encodeFrame(type: FrameType, id: number, payload: Buffer | string = Buffer.alloc(0)): Buffer {
  const body = typeof payload === 'string' ? Buffer.from(payload, 'utf8') : payload;
  const head = Buffer.allocUnsafe(HEADER_BYTES + TYPE_AND_ID_BYTES);
  head.writeUInt32BE(TYPE_AND_ID_BYTES + body.length, 0);
  head.writeUInt8(type, HEADER_BYTES);
  head.writeUInt32BE(id, HEADER_BYTES + 1);
  return body.length === 0 ? head : Buffer.concat([head, body]);
}

/** A decoded frame. */
export interface Frame {
  type: number;
  id: number;
  payload: Buffer;
}

/** Cuts a byte stream into frames; a frame may arrive in many chunks, and a chunk hold many frames. */
export class FrameReader {
  private pending: Buffer = Buffer.alloc(0);

  constructor(private readonly onFrame: (frame: Frame) => void) {}

  /** Feeds a chunk; throws on a length no frame can have (the stream is then useless). */
  push(chunk: Buffer): void {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    let offset = 0;
    while (this.pending.length - offset >= HEADER_BYTES) {
      const length = this.pending.readUInt32BE(offset);
      if (length < TYPE_AND_ID_BYTES || length > MAX_FRAME_BYTES)
        throw new Error(`spawn server: bad frame length ${length}`);
      if (this.pending.length - offset < HEADER_BYTES + length) break;
      const start = offset + HEADER_BYTES;
      this.onFrame({
        type: this.pending.readUInt8(start),
        id: this.pending.readUInt32BE(start + 1),
        payload: this.pending.subarray(start + TYPE_AND_ID_BYTES, start + length),
      });
      offset = start + length;
    }
    this.pending = offset === this.pending.length ? Buffer.alloc(0) : this.pending.subarray(offset);
  }
}
