/** Issue 26 item 6: the activity options of a call placed on a foreground host. */
import { describe, expect, it } from 'vitest';
import {
  HEARTBEAT_TIMEOUT_TYPE,
  HOST_HEARTBEAT_TIMEOUT_MS,
  HOST_START_FAST_TIMEOUT_MS,
  placedOptions,
} from '../../workflows/host-placement';

const retry = { maximumAttempts: 12, nonRetryableErrorTypes: ['ContextOverflow'] };

describe('placedOptions', () => {
  it('leaves a call on the default queue as it is', () => {
    expect(placedOptions({}, retry)).toEqual({ retry });
  });

  it('puts a call on the host with its start window and short heartbeat timeout, not retried by Temporal', () => {
    const options = placedOptions(
      {
        taskQueue: 'q@run-1-a',
        scheduleToStartTimeoutMs: HOST_START_FAST_TIMEOUT_MS,
        heartbeatTimeoutMs: HOST_HEARTBEAT_TIMEOUT_MS,
        heartbeatNotRetried: true,
      },
      retry,
    );
    expect(options).toEqual({
      taskQueue: 'q@run-1-a',
      scheduleToStartTimeout: HOST_START_FAST_TIMEOUT_MS,
      heartbeatTimeout: HOST_HEARTBEAT_TIMEOUT_MS,
      retry: { maximumAttempts: 12, nonRetryableErrorTypes: ['ContextOverflow', HEARTBEAT_TIMEOUT_TYPE] },
    });
    // The caller's policy is not changed in place.
    expect(retry.nonRetryableErrorTypes).toEqual(['ContextOverflow']);
  });

  it('lets Temporal retry a heartbeat timeout of the recheck on the host', () => {
    const options = placedOptions(
      {
        taskQueue: 'q@run-1-a',
        scheduleToStartTimeoutMs: 2_000,
        heartbeatTimeoutMs: HOST_HEARTBEAT_TIMEOUT_MS,
      },
      { maximumAttempts: 1 },
    );
    expect(options.retry).toEqual({ maximumAttempts: 1 });
  });
});
