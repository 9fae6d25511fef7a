/** Token usage of one model request, as the provider reported it. */
export interface RequestUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  /** Of the cache writes, those written for an hour (Anthropic's 1-hour TTL, priced higher); absent: none. */
  cacheWrite1hTokens?: number;
}

/** Usage counters of a goal. Occupancy and cumulative cost are kept apart on purpose (spec S-GAUGE). */
export interface UsageTotals {
  /** Largest single request of the current run: how full the context window is. */
  contextTokens: number;
  /** Sum of input and output tokens of every request. */
  totalTokens: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  requests: number;
}

export const EMPTY_USAGE: UsageTotals = {
  contextTokens: 0,
  totalTokens: 0,
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  requests: 0,
};

/** Adds one request to the totals; occupancy is the largest request, not a sum. */
export function addRequestUsage(totals: UsageTotals, request: RequestUsage): UsageTotals {
  return {
    contextTokens: Math.max(totals.contextTokens, request.inputTokens + request.outputTokens),
    totalTokens: totals.totalTokens + request.inputTokens + request.outputTokens,
    inputTokens: totals.inputTokens + request.inputTokens,
    outputTokens: totals.outputTokens + request.outputTokens,
    cacheReadTokens: totals.cacheReadTokens + request.cacheReadTokens,
    cacheWriteTokens: totals.cacheWriteTokens + request.cacheWriteTokens,
    requests: totals.requests + 1,
  };
}

/**
 * Adds `requests` billed attempts with their summed usage to the totals (core/paid-calls.ts): they
 * count in the tokens and requests, but they are not a context the model was shown, so occupancy
 * stays as it was.
 */
export function addBilledUsage(totals: UsageTotals, usage: RequestUsage, requests: number): UsageTotals {
  return {
    contextTokens: totals.contextTokens,
    totalTokens: totals.totalTokens + usage.inputTokens + usage.outputTokens,
    inputTokens: totals.inputTokens + usage.inputTokens,
    outputTokens: totals.outputTokens + usage.outputTokens,
    cacheReadTokens: totals.cacheReadTokens + usage.cacheReadTokens,
    cacheWriteTokens: totals.cacheWriteTokens + usage.cacheWriteTokens,
    requests: totals.requests + requests,
  };
}
