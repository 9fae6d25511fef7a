/**
 * Issue 20, §5: the encrypted payload codec and its keys. Pure code, no server: the codec's wire form
 * against @temporalio/proto's, sealing and opening with key rotation, what a missing or wrong key
 * says, and how the keys are read from the environment or a file.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { defaultPayloadConverter } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../core/errors';
import {
  decryptPayload,
  ENCRYPTED_ENCODING,
  EncryptionCodec,
  encryptPayload,
  KEY_ID_METADATA,
  PayloadCodecError,
} from '../../worker/payload-codec';
import {
  loadPayloadKeys,
  PAYLOAD_KEYS_ENV,
  type PayloadKey,
  parsePayloadKeys,
} from '../../worker/payload-keys';
import { decodePayloadProto, encodePayloadProto } from '../../worker/payload-proto';
import { tempDir } from '../support/cli';

const key = (id: string): PayloadKey => ({ id, key: randomBytes(32) });
const text = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? []).toString('utf8');
const SECRET = 'make the launch codes readable only by the board';

const payloadArbitrary = fc.record({
  metadata: fc.dictionary(
    fc.string({ minLength: 1, maxLength: 20 }),
    fc.uint8Array({ maxLength: 40 }).map((bytes) => Buffer.from(bytes)),
  ),
  data: fc.uint8Array({ maxLength: 2000 }).map((bytes) => Buffer.from(bytes)),
});

describe('the payload wire form', () => {
  it('is what @temporalio/proto encodes and decodes, both ways', () => {
    const Payload = temporal.api.common.v1.Payload;
    fc.assert(
      fc.property(payloadArbitrary, (payload) => {
        const ours = encodePayloadProto(payload);
        const theirs = Payload.decode(ours);
        expect(Object.keys(theirs.metadata).sort()).toEqual(Object.keys(payload.metadata).sort());
        for (const [name, value] of Object.entries(payload.metadata)) {
          expect(Buffer.from(theirs.metadata[name])).toEqual(value);
        }
        expect(Buffer.from(theirs.data)).toEqual(payload.data);
        const back = decodePayloadProto(Payload.encode(Payload.create(payload)).finish());
        expect(back.metadata).toEqual(payload.metadata);
        expect(Buffer.from(back.data ?? [])).toEqual(payload.data);
      }),
    );
  });
});

describe('encrypting a payload', () => {
  it('seals metadata and data under the first key, names the key, and opens again', () => {
    const first = key('k2');
    const payload = defaultPayloadConverter.toPayload({ objective: SECRET });
    const sealed = encryptPayload(payload, first);
    expect(text(sealed.metadata?.encoding)).toBe(ENCRYPTED_ENCODING);
    expect(text(sealed.metadata?.[KEY_ID_METADATA])).toBe('k2');
    expect(Buffer.from(sealed.data ?? []).includes(SECRET)).toBe(false);
    expect(JSON.stringify(sealed)).not.toContain('json/plain');
    // Rotation: the old key is listed after the new one, and still opens what it sealed.
    const opened = decryptPayload(sealed, [key('k3'), first]);
    expect(defaultPayloadConverter.fromPayload(opened)).toEqual({ objective: SECRET });
    // A fresh nonce each time: the same value never seals to the same bytes.
    expect(Buffer.from(encryptPayload(payload, first).data ?? [])).not.toEqual(
      Buffer.from(sealed.data ?? []),
    );
  });

  it('passes payloads that are not encrypted through, both ways', async () => {
    const plain = defaultPayloadConverter.toPayload('left as it was');
    expect(decryptPayload(plain, [])).toBe(plain);
    expect(await new EncryptionCodec([]).encode([plain])).toEqual([plain]);
    expect(await new EncryptionCodec([key('k1')]).decode([plain])).toEqual([plain]);
  });

  it('names the missing key and where keys are set; a wrong key under the same id does not authenticate', async () => {
    const sealed = encryptPayload(defaultPayloadConverter.toPayload(SECRET), key('k1'));
    const heard: PayloadCodecError[] = [];
    const codec = new EncryptionCodec([key('k2')], (error) => heard.push(error));
    await expect(codec.decode([sealed])).rejects.toThrow(
      /key "k1": it is not among the payload keys \(GOALRUN_PAYLOAD_KEYS or the config key payload_keys_file; this process has "k2"\)/,
    );
    expect(heard.map((error) => [error.type, error.keyId])).toEqual([['PayloadKeyMissing', 'k1']]);
    expect(() => decryptPayload(sealed, [])).toThrow(/none is set/);
    expect(() => decryptPayload(sealed, [key('k1')])).toThrow(
      expect.objectContaining({ type: 'PayloadDecryptFailed' }),
    );
    const damaged = { ...sealed, data: Buffer.from(sealed.data ?? []).fill(7, 20, 21) };
    expect(() => decryptPayload(damaged, [key('k1')])).toThrow(PayloadCodecError);
  });
});

describe('payload keys', () => {
  const base64 = randomBytes(32).toString('base64');
  const other = randomBytes(32).toString('base64');

  it('are id:base64 entries, comma or newline separated, first one first', () => {
    const keys = parsePayloadKeys(`k1:${base64}, old:${other}\n# retired: gone:xyz\n`, 'test');
    expect(keys.map((k) => k.id)).toEqual(['k1', 'old']);
    expect(keys[0].key.toString('base64')).toBe(base64);
  });

  it('refuse a bad entry in one line that shows no key material', () => {
    const bad = [
      [`${base64}`, /entry 1 is not "id:base64key"/],
      [`k1:${base64.slice(0, 20)}`, /key "k1" must be 32 bytes in base64/],
      [`k 1:${base64}`, /entry 1 is not "id:base64key"/],
      [`k1:${base64},k1:${other}`, /key id "k1" appears twice/],
    ] as const;
    for (const [entries, message] of bad) {
      let error: unknown;
      try {
        parsePayloadKeys(entries, PAYLOAD_KEYS_ENV);
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toMatch(message);
      expect((error as Error).message).not.toContain(base64.slice(0, 12));
    }
  });

  it('come from GOALRUN_PAYLOAD_KEYS first, else from the keys file', () => {
    const dir = tempDir('payload-keys');
    const file = path.join(dir, 'keys');
    fs.writeFileSync(file, `# goalrun payload keys\nfile-key:${other}\n`);
    expect(loadPayloadKeys({ [PAYLOAD_KEYS_ENV]: `env-key:${base64}` }, file).map((k) => k.id)).toEqual([
      'env-key',
    ]);
    expect(loadPayloadKeys({}, file).map((k) => k.id)).toEqual(['file-key']);
    expect(loadPayloadKeys({}, undefined)).toEqual([]);
    expect(() => loadPayloadKeys({}, path.join(dir, 'missing'))).toThrow(/cannot read payload_keys_file/);
    fs.writeFileSync(file, '# nothing yet\n');
    expect(() => loadPayloadKeys({}, file)).toThrow(/holds no key/);
  });
});
