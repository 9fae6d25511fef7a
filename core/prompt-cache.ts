/**
 * What `goalrun stats` and the stream say about the provider's prompt cache: how much of the input
 * was read from it and written to it, and whether the model's minimum cacheable prefix (its card's
 * `minCacheTokens`) kept requests from being cached at all, which providers never report.
 */
import type { ModelCard } from './model-card';
import type { UsageTotals } from './usage';

/** The prompt cache of a goal, for `stats --json`. */
export interface CacheReport {
  readTokens: number;
  writeTokens: number;
  /** Cache reads as a share of all input tokens (0 to 1); null before any input. */
  readShare: number | null;
  /** The model's minimum cacheable prefix, when its card says. */
  minCacheTokens: number | null;
  /** The fixed prefix of every request (system prompt, tool schemas), as the last step estimated it. */
  fixedPrefixTokens: number | null;
  /** No request was as long as the minimum: nothing could be cached. */
  belowMinimum: boolean;
  /** One line on the minimum, when it matters. */
  note: string | null;
}

/** The report of a goal's usage, its model's card and its fixed prefix (compaction state). */
export function cacheReport(
  usage: UsageTotals,
  card: ModelCard | null | undefined,
  fixedPrefixTokens: number | null | undefined,
): CacheReport {
  const minimum = card?.minCacheTokens ?? null;
  const fixed = fixedPrefixTokens && fixedPrefixTokens > 0 ? fixedPrefixTokens : null;
  // The largest request is input plus output; no request's prompt was longer than that.
  const belowMinimum = minimum !== null && usage.requests > 0 && usage.contextTokens < minimum;
  let note: string | null = null;
  if (belowMinimum) {
    note = `no request reached ${card?.model}'s caching minimum of ${minimum} tokens: providers cache nothing shorter, and say nothing about it`;
  } else if (minimum !== null && fixed !== null && fixed < minimum) {
    note = `the fixed prefix (system prompt and tools, ~${fixed} tokens) is under ${card?.model}'s caching minimum of ${minimum} tokens: a request is cached only once its conversation has grown past it`;
  }
  return {
    readTokens: usage.cacheReadTokens,
    writeTokens: usage.cacheWriteTokens,
    readShare: cacheReadShare(usage),
    minCacheTokens: minimum,
    fixedPrefixTokens: fixed,
    belowMinimum,
    note,
  };
}

/** Cache reads as a share of the input (0 to 1), or null before any input. */
export function cacheReadShare(usage: { inputTokens: number; cacheReadTokens: number }): number | null {
  if (usage.inputTokens <= 0) return null;
  return Math.min(1, usage.cacheReadTokens / usage.inputTokens);
}

/** The share as stream-json carries it: rounded to 4 places, 0 before any input. */
export function roundedShare(usage: { inputTokens: number; cacheReadTokens: number }): number {
  return Math.round((cacheReadShare(usage) ?? 0) * 10_000) / 10_000;
}

/** The report's lines for `goalrun stats`. */
export function renderCacheReport(report: CacheReport): string[] {
  const share =
    report.readShare === null ? 'no input yet' : `${(report.readShare * 100).toFixed(1)}% of input`;
  const lines = [
    `prompt cache:     ${share} read from the cache (${report.readTokens} read, ${report.writeTokens} written)`,
  ];
  if (report.note) lines.push(`                  ${report.note}`);
  return lines;
}
