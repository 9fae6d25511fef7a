/**
 * The keys of the encrypted payload codec (docs/security.md): `GOALRUN_PAYLOAD_KEYS=id1:base64key,…`,
 * else the file named by the config's `payload_keys_file` (the same entries, one per line or comma
 * separated, `#` comments). The first key encrypts; every listed key decrypts, so a key is rotated
 * by putting the new one first and removing the old one once no history needs it.
 */
import fs from 'node:fs';
import { ConfigError } from '../core/errors';

/** The variable that holds the payload keys. */
export const PAYLOAD_KEYS_ENV = 'GOALRUN_PAYLOAD_KEYS';
/** AES-256: a key is 32 bytes. */
export const PAYLOAD_KEY_BYTES = 32;
/** What a key id may hold: it is written, in clear, beside every payload it encrypts. */
const KEY_ID_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;

/** One AES-256 key and the id that names it in payload metadata. */
export interface PayloadKey {
  id: string;
  key: Buffer;
}

/**
 * Parses `id:base64key` entries separated by commas or newlines; `#` starts a comment. `source`
 * names where they came from in errors, which never show key material.
 */
export function parsePayloadKeys(text: string, source: string): PayloadKey[] {
  const entries = text
    .split(/\r?\n/)
    .map((line) => line.replace(/#.*$/, ''))
    .flatMap((line) => line.split(','))
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  const keys: PayloadKey[] = [];
  for (const [index, entry] of entries.entries()) {
    const colon = entry.indexOf(':');
    const id = colon < 0 ? '' : entry.slice(0, colon).trim();
    const encoded = colon < 0 ? '' : entry.slice(colon + 1).trim();
    if (!KEY_ID_PATTERN.test(id)) {
      throw new ConfigError(
        `${source}: entry ${index + 1} is not "id:base64key" with an id of letters, digits, ".", "_" or "-"`,
      );
    }
    const key = Buffer.from(encoded, 'base64');
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded) || key.length !== PAYLOAD_KEY_BYTES) {
      throw new ConfigError(
        `${source}: key "${id}" must be ${PAYLOAD_KEY_BYTES} bytes in base64 (e.g. from: openssl rand -base64 32)`,
      );
    }
    if (keys.some((known) => known.id === id))
      throw new ConfigError(`${source}: key id "${id}" appears twice`);
    keys.push({ id, key });
  }
  return keys;
}

/**
 * The payload keys of this process: GOALRUN_PAYLOAD_KEYS when set, else the config's keys file,
 * else none (payloads go unencrypted; encrypted ones cannot be read and say so).
 */
export function loadPayloadKeys(env: NodeJS.ProcessEnv, keysFile: string | undefined): PayloadKey[] {
  const fromEnv = env[PAYLOAD_KEYS_ENV];
  if (fromEnv !== undefined && fromEnv.trim() !== '') {
    const keys = parsePayloadKeys(fromEnv, PAYLOAD_KEYS_ENV);
    if (keys.length === 0) throw new ConfigError(`${PAYLOAD_KEYS_ENV} holds no key`);
    return keys;
  }
  if (!keysFile) return [];
  let text: string;
  try {
    text = fs.readFileSync(keysFile, 'utf8');
  } catch (err) {
    throw new ConfigError(`cannot read payload_keys_file ${keysFile}: ${(err as Error).message}`);
  }
  const keys = parsePayloadKeys(text, `payload_keys_file ${keysFile}`);
  if (keys.length === 0) throw new ConfigError(`payload_keys_file ${keysFile} holds no key`);
  return keys;
}
