/**
 * The encrypted payload codec (issue 20, §5; docs/security.md): AES-256-GCM over the whole payload
 * (its metadata and data, in protobuf form), sealed with the first payload key and opened with
 * whichever listed key its `encryption-key-id` names. Payloads that are not encrypted pass through
 * both ways, so goals started before encryption was turned on stay readable.
 *
 * Plain functions over node:crypto plus a PayloadCodec for the SDK: the CLI's HTTP reader decrypts
 * with the functions without loading the Temporal SDK (issue 10).
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Payload, PayloadCodec } from '@temporalio/common';
import type { PayloadKey } from './payload-keys';
import { decodePayloadProto, encodePayloadProto, type PlainPayload } from './payload-proto';

/** The `encoding` of an encrypted payload, as Temporal's own encryption samples name it. */
export const ENCRYPTED_ENCODING = 'binary/encrypted';
/** Metadata that names the key a payload was encrypted with. */
export const KEY_ID_METADATA = 'encryption-key-id';
/** Metadata that names the cipher, so a reader can tell it from another codec's. */
export const CIPHER_METADATA = 'encryption-cipher';
export const CIPHER = 'AES-256-GCM';
const ALGORITHM = 'aes-256-gcm';
/** GCM's standard nonce size; a fresh random one per payload. */
const IV_BYTES = 12;
const AUTH_TAG_BYTES = 16;

/** Where a process's payload keys are set, for the messages that say one is missing. */
export const PAYLOAD_KEYS_HINT = 'GOALRUN_PAYLOAD_KEYS or the config key payload_keys_file';

/** Why an encrypted payload could not be opened. */
export type PayloadCodecErrorType = 'PayloadKeyMissing' | 'PayloadDecryptFailed';

/** An encrypted payload this process cannot open: it lacks the key, or the payload does not authenticate. */
export class PayloadCodecError extends Error {
  constructor(
    readonly type: PayloadCodecErrorType,
    message: string,
    /** The key id the payload names. */
    readonly keyId: string,
  ) {
    super(message);
    this.name = 'PayloadCodecError';
  }
}

const utf8 = (text: string) => Buffer.from(text, 'utf8');
const text = (bytes: Uint8Array | undefined | null) => (bytes ? Buffer.from(bytes).toString('utf8') : '');

/** Whether a payload is one this codec encrypted. */
export function isEncryptedPayload(payload: PlainPayload): boolean {
  return text(payload.metadata?.encoding) === ENCRYPTED_ENCODING;
}

/** The id of the key an encrypted payload names ('' when it names none). */
export function payloadKeyId(payload: PlainPayload): string {
  return text(payload.metadata?.[KEY_ID_METADATA]);
}

/** Seals a payload with a key: `iv ‖ ciphertext ‖ tag`, the key id as additional authenticated data. */
export function encryptPayload(payload: PlainPayload, key: PayloadKey): Payload {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv(ALGORITHM, key.key, iv, { authTagLength: AUTH_TAG_BYTES });
  cipher.setAAD(utf8(key.id));
  const sealed = Buffer.concat([cipher.update(encodePayloadProto(payload)), cipher.final()]);
  return {
    metadata: {
      encoding: utf8(ENCRYPTED_ENCODING),
      [KEY_ID_METADATA]: utf8(key.id),
      [CIPHER_METADATA]: utf8(CIPHER),
    },
    data: Buffer.concat([iv, sealed, cipher.getAuthTag()]),
  };
}

/** The message of a payload whose key is not among `keys`. */
function missingKeyMessage(keyId: string, keys: readonly PayloadKey[]): string {
  const have =
    keys.length > 0 ? `this process has ${keys.map((key) => `"${key.id}"`).join(', ')}` : 'none is set';
  return `cannot decrypt a payload encrypted with key "${keyId}": it is not among the payload keys (${PAYLOAD_KEYS_HINT}; ${have})`;
}

/** Opens an encrypted payload with the key it names; any other payload is returned as it is. */
export function decryptPayload(payload: PlainPayload, keys: readonly PayloadKey[]): PlainPayload {
  if (!isEncryptedPayload(payload)) return payload;
  const keyId = payloadKeyId(payload);
  const key = keys.find((each) => each.id === keyId);
  if (!key) throw new PayloadCodecError('PayloadKeyMissing', missingKeyMessage(keyId, keys), keyId);
  const data = Buffer.from(payload.data ?? new Uint8Array());
  try {
    if (data.length < IV_BYTES + AUTH_TAG_BYTES) throw new Error('too short');
    const decipher = createDecipheriv(ALGORITHM, key.key, data.subarray(0, IV_BYTES), {
      authTagLength: AUTH_TAG_BYTES,
    });
    decipher.setAAD(utf8(key.id));
    decipher.setAuthTag(data.subarray(data.length - AUTH_TAG_BYTES));
    const plain = Buffer.concat([
      decipher.update(data.subarray(IV_BYTES, data.length - AUTH_TAG_BYTES)),
      decipher.final(),
    ]);
    return decodePayloadProto(plain);
  } catch {
    throw new PayloadCodecError(
      'PayloadDecryptFailed',
      `cannot decrypt a payload with key "${keyId}": it does not authenticate (a different key under the same id, or damaged data)`,
      keyId,
    );
  }
}

/**
 * The SDK's view of the codec. With no keys it encrypts nothing, but still refuses, with a clear
 * error, an encrypted payload it cannot open. `onDecryptError` hears of every such refusal (a worker
 * stops on it rather than fail the same task over and over).
 */
export class EncryptionCodec implements PayloadCodec {
  constructor(
    private readonly keys: readonly PayloadKey[],
    private readonly onDecryptError?: (error: PayloadCodecError) => void,
  ) {}

  async encode(payloads: Payload[]): Promise<Payload[]> {
    const key = this.keys[0];
    if (!key) return payloads;
    return payloads.map((payload) =>
      // Sealed already, or held in external storage (its details would not survive sealing).
      isEncryptedPayload(payload) || (payload.externalPayloads?.length ?? 0) > 0
        ? payload
        : encryptPayload(payload, key),
    );
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      try {
        return decryptPayload(payload, this.keys) as Payload;
      } catch (error) {
        if (error instanceof PayloadCodecError) this.onDecryptError?.(error);
        throw error;
      }
    });
  }
}
