/**
 * The stream idle timeout: a model call whose provider sends nothing at all for the idle timeout is
 * given up as stalled (a retryable ProviderStalled), instead of hanging until the step's timeout.
 * Every byte counts, SSE comments and pings included, so the bytes are seen below the SDK's SSE
 * parser: the providers fetch through byteReportingFetch, which reports each chunk of a response
 * body to the listener of the call that made the request (carried by AsyncLocalStorage, because
 * one provider object serves many calls).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { ApplicationFailure } from '@temporalio/common';
import { FailureType } from '../../core/errors';
import { DEFAULT_STREAM_IDLE_TIMEOUT_S } from '../../core/limits';

/**
 * Called for every chunk of bytes of a provider's response (its headers count as the first).
 * `answering` is true for a chunk of the body of a successful (2xx) response: the provider accepted
 * the request and is answering it, so it bills the call whatever happens to the stream next.
 */
export type ByteListener = (answering: boolean) => void;

const byteListeners = new AsyncLocalStorage<ByteListener>();

/** The words every stalled-stream failure starts with: `status` and the live line look for them. */
export const STALLED_PREFIX = 'provider stream stalled';

/** The listener of the call running now (withIdleTimeout's), for a client that reads bytes itself. */
export function currentByteListener(): ByteListener | undefined {
  return byteListeners.getStore();
}

/** A fetch for the AI SDK providers that reports every chunk of every response body it returns. */
export const byteReportingFetch = async (
  input: Parameters<typeof fetch>[0],
  init?: Parameters<typeof fetch>[1],
): Promise<Response> => {
  const onBytes = byteListeners.getStore();
  const response = await fetch(input, init);
  if (!onBytes) return response;
  onBytes(false);
  if (!response.body) return response;
  const answering = response.ok;
  // Pulled chunk by chunk rather than piped through a TransformStream: a pipe is a second stream
  // pair and a promise chain per chunk, on every model call's stream.
  const reader = response.body.getReader();
  const reported = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const { done, value } = await reader.read();
        if (done) {
          controller.close();
          return;
        }
        onBytes(answering);
        controller.enqueue(value);
      },
      cancel: (reason) => reader.cancel(reason),
    },
    { highWaterMark: 0 },
  );
  return new Response(reported, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
};

/** The idle timeout of a call in milliseconds: the goal's setting, else the default. */
export function idleTimeoutMsOf(seconds: number | undefined): number {
  return (seconds ?? DEFAULT_STREAM_IDLE_TIMEOUT_S) * 1000;
}

/**
 * Runs `work` (one provider request and the reading of its stream) under the idle timer: each chunk
 * of bytes re-arms it and is passed on to `onBytes`; when it fires, the signal `work` was given
 * aborts and the call fails as a retryable ProviderStalled.
 */
export async function withIdleTimeout<T>(
  idleMs: number,
  outer: AbortSignal,
  onBytes: ByteListener | undefined,
  what: string,
  work: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const stall = new AbortController();
  // Re-armed by every chunk: refresh() restarts the same timer instead of making a new one.
  const timer = setTimeout(() => stall.abort(), idleMs);
  const arm = () => timer.refresh();
  try {
    return await byteListeners.run(
      (answering) => {
        arm();
        onBytes?.(answering);
      },
      () => work(AbortSignal.any([outer, stall.signal])),
    );
  } catch (err) {
    if (stall.signal.aborted && !outer.aborted) throw stalledFailure(idleMs, what);
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

/** The failure of a stalled call: retryable, so the next attempt asks the provider again. */
export function stalledFailure(idleMs: number, what: string): ApplicationFailure {
  return ApplicationFailure.create({
    type: FailureType.ProviderStalled,
    message: `${STALLED_PREFIX}: ${what} sent nothing for ${Math.round(idleMs / 1000)} s`,
    nonRetryable: false,
  });
}
