/**
 * The data converter every goalrun client and worker uses: the encrypted payload codec (a
 * pass-through without keys that still names the missing key when it meets an encrypted payload)
 * and, when there are keys, the failure converter that lets the codec encrypt failure messages too.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { DataConverter } from '@temporalio/common';
import { EncryptionCodec, type PayloadCodecError } from './payload-codec';
import type { PayloadKey } from './payload-keys';

const FAILURE_CONVERTER_MODULE = 'encrypted-failure-converter';

/**
 * The module whose `failureConverter` encodes failure messages as payloads. The SDK loads it with
 * Node's require (and webpack bundles it), so it is the compiled file: beside this one in dist/, or
 * in dist/ when this file runs from source (tests).
 */
export function encryptedFailureConverterPath(): string {
  const candidates = [
    path.join(__dirname, `${FAILURE_CONVERTER_MODULE}.js`),
    path.resolve(__dirname, '..', 'dist', 'worker', `${FAILURE_CONVERTER_MODULE}.js`),
  ];
  const found = candidates.find((candidate) => fs.existsSync(candidate));
  if (!found) throw new Error(`${FAILURE_CONVERTER_MODULE}.js is missing: run \`npm run build\` first`);
  return found;
}

/** goalrun's data converter for a set of payload keys (none: payloads are not encrypted). */
export function goalrunDataConverter(
  keys: readonly PayloadKey[],
  onDecryptError?: (error: PayloadCodecError) => void,
): DataConverter {
  return {
    payloadCodecs: [new EncryptionCodec(keys, onDecryptError)],
    ...(keys.length > 0 ? { failureConverterPath: encryptedFailureConverterPath() } : {}),
  };
}
