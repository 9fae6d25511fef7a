/**
 * Failure types that cross the activity boundary. Retry policies and the workflow name them by
 * these strings, so they are durable contracts: never rename one.
 */
export const FailureType = {
  /** The provider asked us to slow down or had a transient fault (429, 408, 409, 5xx, network). */
  ProviderUnavailable: 'ProviderUnavailable',
  /** The provider refused our credentials (401, 403). */
  ProviderAuth: 'ProviderAuth',
  /** The provider rejected the request as malformed (400 and other 4xx). */
  ProviderBadRequest: 'ProviderBadRequest',
  /** The request did not fit the model's context window. */
  ContextOverflow: 'ContextOverflow',
  /** goalrun is misconfigured: unknown provider, missing API key, bad model file. */
  ConfigError: 'ConfigError',
  /** The provider's stream went silent (no byte, not even a keep-alive) for stream_idle_timeout_s: retried. */
  ProviderStalled: 'ProviderStalled',
  /** The provider could not be reached at all (refused, DNS) for longer than provider_unreachable_minutes. */
  ProviderUnreachable: 'ProviderUnreachable',
  /** The session store failed (PostgreSQL down or restarting): retried until it is back; never the provider's fault. */
  StoreUnavailable: 'StoreUnavailable',
  /** The tool host is shutting down: the command was not started (or was killed); retry on another worker. */
  ToolHostShuttingDown: 'ToolHostShuttingDown',
  /** The account is out of quota until a reset time (details: `{ resetAtMs }`, null when unknown): the goal waits. */
  QuotaExhausted: 'QuotaExhausted',
  /**
   * The provider failed retryably failover_after_failures times in a row, or for failover_after_minutes
   * (issue 27 §3): the step gives up on this model, and the workflow moves the goal to its backup.
   * Thrown non-retryable; only a step that has a backup to go to ends with it.
   */
  ProviderOutage: 'ProviderOutage',
  /**
   * A worker that runs no tools (`--role model`) was asked for a tool host's call as a local activity:
   * the workflow makes the call again as an activity, which a tool host takes.
   */
  NotAToolHost: 'NotAToolHost',
} as const;

export type FailureTypeName = (typeof FailureType)[keyof typeof FailureType];

/** Failure types that no retry can fix. */
export const NON_RETRYABLE_FAILURES: FailureTypeName[] = [
  FailureType.ProviderAuth,
  FailureType.ProviderBadRequest,
  FailureType.ContextOverflow,
  FailureType.ConfigError,
  FailureType.ProviderUnreachable,
];

/** A user-facing configuration problem (bad flag, bad config file, missing key). The CLI exits 2 on it. */
export class ConfigError extends Error {
  readonly type = FailureType.ConfigError;
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}
