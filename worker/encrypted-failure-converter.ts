/**
 * The failure converter of workers and clients that encrypt payloads: a failure's message and stack
 * trace move into an encoded attributes payload, which the codec encrypts like any other (without it
 * they would stay in clear text in the history). Loaded by path (DataConverter.failureConverterPath)
 * and bundled into the workflow code, since workflows convert their own failures.
 */
import { DefaultFailureConverter } from '@temporalio/common';

/** The failure converter used when payloads are encrypted. */
export const failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
