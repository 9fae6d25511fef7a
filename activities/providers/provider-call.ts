/**
 * The frame every model client puts around one provider request: nothing is sent once the activity
 * was cancelled, a stream silent for the idle timeout fails as ProviderStalled (stream-idle.ts), and
 * whatever else went wrong leaves as the ApplicationFailure errors.ts gives it, or as an AbortError
 * once the request's signal fired.
 */
import { ApplicationFailure } from '@temporalio/common';
import { FailureType } from '../../core/errors';
import { abortErrorFrom, type FailureContext, toActivityFailure } from './errors';
import { idleTimeoutMsOf, withIdleTimeout } from './stream-idle';
import type { ModelRequest } from './types';

/** Runs `work` (the request and the reading of its answer) for `request` in that frame. */
export async function providerCall<T>(
  request: ModelRequest,
  context: FailureContext,
  work: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const { abortSignal } = request;
  if (abortSignal.aborted) throw abortErrorFrom(abortSignal);
  try {
    return await withIdleTimeout(
      request.idleTimeoutMs ?? idleTimeoutMsOf(undefined),
      abortSignal,
      request.onBytes,
      `${context.provider} model ${context.model}`,
      work,
    );
  } catch (err) {
    if (err instanceof ApplicationFailure && err.type === FailureType.ProviderStalled) throw err;
    // Once the signal fired, whatever broke (the socket, the body, the parse) is the abort's doing.
    if (abortSignal.aborted) throw abortErrorFrom(abortSignal);
    throw toActivityFailure(err, context);
  }
}
