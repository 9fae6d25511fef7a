/**
 * Reading payloads and failure messages that the gRPC client hands over raw (a history event, a
 * pending activity): through the client's data converter, so that encrypted payloads (docs/security.md)
 * are decrypted first, as the SDK does for the values it decodes itself.
 */
import type { LoadedDataConverter, Payload } from '@temporalio/common';

/** A failure as the gRPC API reports it: with encrypting workers the message is in `encodedAttributes`. */
export interface RawFailure {
  message?: string | null;
  encodedAttributes?: Payload | null;
}

/** A raw payload's value, decoded by the codecs (last first) and converted. */
export async function decodeRawPayload(converter: LoadedDataConverter, payload: Payload): Promise<unknown> {
  let payloads = [payload];
  for (const codec of [...converter.payloadCodecs].reverse()) payloads = await codec.decode(payloads);
  return converter.payloadConverter.fromPayload(payloads[0]);
}

/** A raw failure's message, from its encoded attributes when it has them. */
export async function rawFailureMessage(
  converter: LoadedDataConverter,
  failure: RawFailure,
): Promise<string> {
  if (failure.encodedAttributes) {
    const attributes = (await decodeRawPayload(converter, failure.encodedAttributes)) as {
      message?: unknown;
    };
    if (typeof attributes?.message === 'string') return attributes.message;
  }
  return failure.message ?? '';
}
