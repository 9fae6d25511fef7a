/**
 * The protobuf wire form of a Temporal `Payload` (temporal.api.common.v1.Payload: `map<string, bytes>
 * metadata = 1; bytes data = 2;`), by hand: the encrypted payload codec seals a whole payload, and the
 * CLI's light commands decrypt payloads read over the HTTP API without loading @temporalio/proto
 * (issue 10). test/worker/payload-codec.test.ts checks it against @temporalio/proto both ways.
 */

/** A payload: what @temporalio/common's Payload holds, minus the external-storage details goalrun does not use. */
export interface PlainPayload {
  metadata?: Record<string, Uint8Array> | null;
  data?: Uint8Array | null;
}

const WIRE_VARINT = 0;
const WIRE_FIXED64 = 1;
const WIRE_LENGTH_DELIMITED = 2;
const WIRE_FIXED32 = 5;
const METADATA_FIELD = 1;
const DATA_FIELD = 2;
const MAP_KEY_FIELD = 1;
const MAP_VALUE_FIELD = 2;

/** A payload's bytes could not be read back as a Payload. */
export class PayloadFormatError extends Error {
  readonly type = 'PayloadFormatError';
}

function varint(value: number): number[] {
  const bytes: number[] = [];
  let rest = value;
  while (rest > 0x7f) {
    bytes.push((rest & 0x7f) | 0x80);
    rest = Math.floor(rest / 128);
  }
  bytes.push(rest);
  return bytes;
}

function lengthDelimited(field: number, body: Uint8Array): Buffer {
  return Buffer.concat([
    Buffer.from([...varint((field << 3) | WIRE_LENGTH_DELIMITED), ...varint(body.length)]),
    body,
  ]);
}

/** The wire bytes of a payload: metadata entries in key order, then the data (absent when empty, as proto3 does). */
export function encodePayloadProto(payload: PlainPayload): Buffer {
  const parts: Buffer[] = [];
  for (const [key, value] of Object.entries(payload.metadata ?? {})) {
    const entry = Buffer.concat([
      lengthDelimited(MAP_KEY_FIELD, Buffer.from(key, 'utf8')),
      lengthDelimited(MAP_VALUE_FIELD, value),
    ]);
    parts.push(lengthDelimited(METADATA_FIELD, entry));
  }
  if (payload.data && payload.data.length > 0) parts.push(lengthDelimited(DATA_FIELD, payload.data));
  return Buffer.concat(parts);
}

/** Reads fields of a message: calls `onBytes` for each length-delimited field and skips the others. */
function readFields(bytes: Uint8Array, onBytes: (field: number, value: Uint8Array) => void): void {
  let at = 0;
  const readVarint = (): number => {
    let value = 0;
    let scale = 1;
    for (;;) {
      if (at >= bytes.length) throw new PayloadFormatError('a payload ends inside a number');
      const byte = bytes[at++];
      value += (byte & 0x7f) * scale;
      if ((byte & 0x80) === 0) return value;
      scale *= 128;
      if (scale > 2 ** 56) throw new PayloadFormatError('a payload holds a number too large to read');
    }
  };
  while (at < bytes.length) {
    const tag = readVarint();
    const field = Math.floor(tag / 8);
    const wire = tag & 7;
    if (wire === WIRE_VARINT) readVarint();
    else if (wire === WIRE_FIXED64) at += 8;
    else if (wire === WIRE_FIXED32) at += 4;
    else if (wire === WIRE_LENGTH_DELIMITED) {
      const length = readVarint();
      if (at + length > bytes.length) throw new PayloadFormatError('a payload field runs past its end');
      onBytes(field, bytes.subarray(at, at + length));
      at += length;
    } else throw new PayloadFormatError(`a payload holds a field of unknown wire type ${wire}`);
    if (at > bytes.length) throw new PayloadFormatError('a payload field runs past its end');
  }
}

/** A payload from its wire bytes; unknown fields are skipped. */
export function decodePayloadProto(bytes: Uint8Array): PlainPayload {
  // Entries, then fromEntries: a key named __proto__ must become a key, not the object's prototype.
  const metadata: Array<[string, Uint8Array]> = [];
  let data: Uint8Array = new Uint8Array();
  readFields(bytes, (field, value) => {
    if (field === DATA_FIELD) data = Buffer.from(value);
    if (field !== METADATA_FIELD) return;
    let key = '';
    let entryValue: Uint8Array = new Uint8Array();
    readFields(value, (entryField, entryBytes) => {
      if (entryField === MAP_KEY_FIELD) key = Buffer.from(entryBytes).toString('utf8');
      if (entryField === MAP_VALUE_FIELD) entryValue = Buffer.from(entryBytes);
    });
    metadata.push([key, entryValue]);
  });
  return { metadata: Object.fromEntries(metadata), data };
}
