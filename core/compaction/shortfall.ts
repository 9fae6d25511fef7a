/**
 * Why a compaction ended over the low-water mark (issue 9.2: "or says why it can't"): what the context
 * still holds, by the parts no further compaction could shrink right now.
 */
import { type ContextPlan, contextEntries, shownTokens } from '../context-plan';
import type { LedgerEntry } from '../ledger';
import { formatTokens } from './notice';
import { STUB_EXCERPT_TOKENS, STUB_TOKENS } from './thresholds';

/**
 * E.g. `system prompt and tools 3k, first message 1k, summary 2k, later messages 7k; no summary: …`.
 * The parts are the ledger's estimates scaled to add up to `afterTokens`, the measured estimate.
 */
export function shortfallReason(
  ledger: LedgerEntry[],
  plan: ContextPlan,
  fixedTokens: number,
  afterTokens: number,
  noSummaryReason?: string,
): string {
  const stubbed = new Set(plan.stubSeqs);
  const elided = new Set(plan.elideArgsSeqs);
  const parts = { first: 0, summary: 0, kept: 0, later: 0 };
  const kept = new Set(plan.keptSeqs);
  for (const entry of contextEntries(ledger, plan)) {
    const tokens = shownTokens(entry, stubbed, elided, STUB_TOKENS, STUB_EXCERPT_TOKENS);
    if (entry.seq === plan.firstSeq) parts.first += tokens;
    else if (entry.seq === plan.summarySeq) parts.summary += tokens;
    else if (kept.has(entry.seq)) parts.kept += tokens;
    else parts.later += tokens;
  }
  const estimated = fixedTokens + parts.first + parts.summary + parts.kept + parts.later;
  const scale = estimated > 0 ? afterTokens / estimated : 1;
  const show = (tokens: number) => formatTokens(tokens * scale);
  const held = [
    `system prompt and tools ${show(fixedTokens)}`,
    `first message ${show(parts.first)}`,
    ...(parts.summary > 0 ? [`summary ${show(parts.summary)}`] : []),
    ...(parts.kept > 0 ? [`kept user messages ${show(parts.kept)}`] : []),
    `later messages ${show(parts.later)}`,
  ].join(', ');
  return noSummaryReason ? `${held}; no summary: ${noSummaryReason}` : held;
}
