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

/**
 * The estimate of a request after a compaction, in the units of the measured one. The ledger's token
 * estimates can differ from the provider's count by a factor (they are meant never to be lower), so
 * what a plan takes out is scaled by measured ÷ estimated: taking out half the estimated context takes
 * out half the measured one. Subtracting estimated tokens from a measured count instead can claim more
 * was freed than the request ever held.
 */
export function scaledEstimate(measured: number, estimatedBefore: number, estimatedAfter: number): number {
  if (estimatedBefore <= 0) return measured;
  return Math.max(0, Math.round((measured * estimatedAfter) / estimatedBefore));
}
