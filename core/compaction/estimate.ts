/**
 * Context pressure of the coming request (spec 003): the input tokens the provider reported for the
 * latest request, plus an estimate for the messages appended since. Provider counts are exact where a
 * character estimate is not, so the estimate covers only what the provider has not seen yet. After a
 * compaction the latest report describes a context that no longer exists (spec: pressure resets), so until
 * the next request reports, the pressure is fixedTokens plus contextTokens of the new plan.
 */
import { type LedgerEntry, lastSeqOfEntry } from '../ledger';

/** What the pressure estimate is built from. */
export interface PressureInput {
  /** Input tokens the provider reported for the latest request. */
  lastReportedInputTokens: number;
  /** Estimated tokens of the messages appended since that request (its answer included). */
  tokensAppendedSince: number;
}

/** Estimated input tokens of the next request. */
export function estimatePressure(input: PressureInput): number {
  return input.lastReportedInputTokens + input.tokensAppendedSince;
}

/**
 * Estimated tokens of the ledger entries after `afterSeq` (the last message the latest request saw). A
 * range reaching past it counts whole: over-estimating pressure is the safe side.
 */
export function tokensAppendedSince(ledger: LedgerEntry[], afterSeq: number): number {
  return ledger.reduce((sum, entry) => (lastSeqOfEntry(entry) > afterSeq ? sum + entry.tokens : sum), 0);
}
