/**
 * A goal's compaction loop without Temporal, for tests: an in-memory transcript, the ledger as the
 * workflow keeps it (appendLedger, so folding runs), and the same pure decisions workflows/compaction.ts
 * makes (decideAutoCompact, planCompaction, prepareSummary, completeSummary). The summarizer is a fake
 * that keeps every fact line it is shown; it can be told to fail, or the "worker" to die after storing.
 */
import { computeBudget } from '../../../core/budget';
import {
  compactionFloorTokens,
  completeSummary,
  planCompaction,
} from '../../../core/compaction/compaction-plan';
import { decideAutoCompact } from '../../../core/compaction/decide';
import { estimatePressure, tokensAppendedSince } from '../../../core/compaction/estimate';
import {
  recordCompactionSuccess,
  recordPruneOnly,
  recordSummarizerFailure,
} from '../../../core/compaction/failure-budget';
import {
  type PreparedSummary,
  prepareSummary,
  type SummarySource,
} from '../../../core/compaction/prepare-summary';
import { prunedContextTokens } from '../../../core/compaction/prune';
import { type CompactionState, initialCompactionState } from '../../../core/compaction/state';
import { spanRanges, summaryFloorTokens } from '../../../core/compaction/summary-span';
import { compactionTargets } from '../../../core/compaction/targets';
import { contextEntries } from '../../../core/context-plan';
import { appendLedger, type LedgerEntry, lastSeqOf } from '../../../core/ledger';
import { ledgerEntryFor } from '../../../core/ledger-entry';
import { type StoredMessage, type TranscriptEntry, textOf, userText } from '../../../core/messages';
import { GENERIC_CARD } from '../../../core/model-card';
import { estimateTokens } from '../../../core/tokens';

/** Fact lines, by the tests' convention: a fake summarizer keeps each one it sees. */
export const FACT_LINE = /FACT-\d+:[^\n"\\]*/g;

/** The fact lines of a text, deduplicated, in order. */
export function factsIn(text: string): string[] {
  return [...new Set(text.match(FACT_LINE) ?? [])];
}

/** A summary in the six sections holding every fact line of the summarizer's input. */
export function factKeepingSummary(input: string): string {
  const facts = factsIn(input);
  return [
    '## Goal',
    'Go on with the objective.',
    '## Decisions and findings',
    ...(facts.length > 0 ? facts.map((fact) => `- ${fact}`) : ['(none)']),
    '## Files modified',
    '(see the list from the tool log)',
    '## Current state',
    'work in progress',
    '## Next steps',
    '- keep going',
    '## References',
    '(none)',
  ].join('\n');
}

/** How the next summarizer call goes. */
export type SummarizerBehaviour = 'ok' | 'fail' | 'crash-after-store';

/** Sizes and settings of a simulated goal. */
export interface SimOptions {
  windowTokens: number;
  /** System prompt and tool schemas. */
  fixedTokens: number;
  thresholdPct?: number;
  targetPct?: number;
  /** The rules of goals started before the low-water mark (compaction-legacy.ts), for comparison. */
  legacy?: boolean;
}

/** What a compaction is asked to do. */
export interface SimCompactRequest {
  manual?: boolean;
  forced?: boolean;
  recovery?: boolean;
  pruneOnly?: boolean;
}

/** One simulated goal. */
export class SimGoal {
  readonly transcript: TranscriptEntry[] = [];
  ledger: LedgerEntry[] = [];
  compaction: CompactionState;
  steps = 0;
  summarizerCalls = 0;
  /** Steps before which a compaction changed the plan. */
  readonly compactedAt: number[] = [];
  /** Texts of every summary that was applied to the plan. */
  readonly appliedSummaries: string[] = [];
  readonly notices: string[] = [];
  /** Every summarizer input, in order. */
  readonly summarizerInputs: string[] = [];
  /** The auto-compact decision before each step. */
  readonly decisions: string[] = [];
  next: SummarizerBehaviour = 'ok';
  private calls = 0;
  private spools = 0;

  constructor(readonly options: SimOptions) {
    const budget = computeBudget(
      { card: { ...GENERIC_CARD }, providerReportedContextTokens: options.windowTokens },
      options.thresholdPct ?? 85,
    );
    this.compaction = {
      ...initialCompactionState(1, { thresholdPct: options.thresholdPct, targetPct: options.targetPct }),
      budget,
      fixedTokens: options.fixedTokens,
    };
    this.append('initial', userText('Objective: build the widget. FACT-0: the objective is the widget'));
  }

  get targets() {
    return compactionTargets(this.compaction.budget!, this.compaction.autoCompact);
  }

  /** Stores a message and adds its ledger entry. */
  append(key: string, message: StoredMessage, spoolId?: number): number {
    const seq = (this.transcript.at(-1)?.seq ?? 0) + 1;
    this.transcript.push({ seq, key, message });
    const entry = ledgerEntryFor(seq, key, message, spoolId === undefined ? {} : { spoolId });
    this.ledger = appendLedger(this.ledger, entry);
    return seq;
  }

  /** Pressure of the coming request, as the workflow estimates it. */
  pressure(): number {
    const c = this.compaction;
    if (c.lastInputTokens === 0) return c.fixedTokens + prunedContextTokens(this.ledger, c.plan);
    return estimatePressure({
      lastReportedInputTokens: c.lastInputTokens,
      tokensAppendedSince: tokensAppendedSince(this.ledger, c.lastCoveredSeq),
    });
  }

  /** One model step: the request reports its size, then one bash call and its output are stored. */
  step(output: string, options: { ok?: boolean } = {}): void {
    this.steps += 1;
    // The "provider" counts the request as the estimate does; what matters here is the planning.
    this.compaction = {
      ...this.compaction,
      lastInputTokens: this.compaction.fixedTokens + prunedContextTokens(this.ledger, this.compaction.plan),
      lastCoveredSeq: lastSeqOf(this.ledger),
    };
    const id = `call-${++this.calls}`;
    this.append(`step:${this.steps}`, {
      role: 'assistant',
      content: [
        { type: 'tool-call', toolCallId: id, toolName: 'bash', input: { command: `run ${this.steps}` } },
      ],
    });
    const spoolId = estimateTokens(output) > 500 ? ++this.spools : undefined;
    this.append(
      `result:${id}`,
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: id,
            toolName: 'bash',
            output: { type: options.ok === false ? 'error-text' : 'text', value: output },
          },
        ],
      },
      spoolId,
    );
  }

  /** A steering message from a person. */
  steer(text: string): void {
    this.append(`steer:${this.transcript.length}`, userText(text));
  }

  /** The auto-compact check before the next step, as workflows/compaction.ts makes it. */
  async beforeStep(): Promise<void> {
    const stepNumber = this.steps + 1;
    const estimate = this.pressure();
    const targets = this.targets;
    const floorInput = {
      ledger: this.ledger,
      plan: this.compaction.plan,
      before: estimate,
      targets,
      fixedTokens: this.compaction.fixedTokens,
    };
    const floorTokens =
      estimate < targets.thresholdTokens
        ? undefined
        : this.options.legacy
          ? summaryFloorTokens(this.ledger, this.compaction.plan, {
              fixedTokens: this.compaction.fixedTokens,
            })
          : compactionFloorTokens(floorInput);
    const decision = decideAutoCompact({
      budgetState: this.compaction.autoCompact,
      estimateTokens: estimate,
      fixedTokens: this.compaction.fixedTokens,
      thresholdTokens: targets.thresholdTokens,
      hardLimitTokens: targets.hardLimitTokens,
      stepNumber,
      floorTokens,
    });
    this.decisions.push(decision.action);
    if (decision.action === 'prune-only') await this.compact({ pruneOnly: true });
    else if (decision.action === 'compact') await this.compact({});
    else if (decision.action === 'forced') await this.compact({ forced: true });
  }

  /** A compaction, step for step as workflows/compaction.ts runs it. */
  async compact(
    request: SimCompactRequest,
  ): Promise<'none' | 'pruned' | 'summarized' | 'failed' | 'discarded'> {
    const stepNumber = this.steps + 1;
    const c = this.compaction;
    const targets = this.targets;
    const measured = this.pressure();
    const legacy = this.options.legacy;
    const before = request.recovery && !legacy ? Math.max(measured, targets.hardLimitTokens + 1) : measured;
    const input = {
      ledger: this.ledger,
      plan: c.plan,
      before,
      targets,
      fixedTokens: c.fixedTokens,
      mode: { manual: request.manual, forced: request.forced, pruneOnly: request.pruneOnly, legacy },
    };
    const pruned = planCompaction(input);
    if (!pruned.summary) {
      if (pruned.stubbed.length + pruned.tailStubbed.length + pruned.elided.length === 0) return 'none';
      this.setCompaction(
        { ...c, plan: pruned.plan, autoCompact: recordPruneOnly(c.autoCompact, stepNumber) },
        pruned.after,
      );
      this.notice(`pruned ${before} → ${pruned.after}`, stepNumber);
      return 'pruned';
    }
    const span = pruned.summary;
    const request_ = {
      compaction: c.compactions + 1,
      spanRanges: spanRanges(this.ledger, span),
      previousSummarySeq: span.previousSummarySeq,
      objective: 'build the widget',
      maxInputTokens: Math.floor(targets.usableInputTokens * 0.6),
    };
    const behaviour = this.next;
    this.next = 'ok';
    let prepared: PreparedSummary;
    if (behaviour === 'fail' && !request.recovery) {
      this.summarizerCalls += 1;
      const failed = recordSummarizerFailure(c.autoCompact, 'summarizer down', 'sim');
      this.setCompaction({ ...c, plan: pruned.plan, autoCompact: failed.state }, pruned.after);
      this.notice(failed.note, stepNumber);
      return 'failed';
    }
    if (behaviour === 'fail') {
      this.summarizerCalls += 1;
      prepared = await prepareSummary(this.source(), { ...request_, extracted: true }, this.summarizer);
    } else {
      prepared = await prepareSummary(this.source(), request_, this.summarizer);
    }
    const entry = this.storeSummary(prepared);
    // The worker died after the summary was stored: the workflow never saw the result.
    if (behaviour === 'crash-after-store') {
      const failed = recordSummarizerFailure(c.autoCompact, 'worker lost', 'sim');
      this.setCompaction({ ...c, plan: pruned.plan, autoCompact: failed.state }, pruned.after);
      this.notice(failed.note, stepNumber);
      return 'failed';
    }
    const done = completeSummary(input, pruned, entry);
    const counted = { ...c, compactions: c.compactions + 1 };
    if (done.after >= before && !request.forced) {
      this.setCompaction({ ...counted, plan: pruned.plan }, pruned.after);
      this.notice('discarded', stepNumber);
      return 'discarded';
    }
    this.ledger = done.ledger;
    this.appliedSummaries.push(textOf(this.transcript.find((e) => e.seq === entry.seq)!.message));
    this.setCompaction(
      { ...counted, plan: done.plan, autoCompact: recordCompactionSuccess(c.autoCompact, stepNumber) },
      done.after,
    );
    this.notice(`summarized ${before} → ${done.after}`, stepNumber);
    return 'summarized';
  }

  /** The text the model would see: every message in context, stubbed outputs left out. */
  contextText(): string {
    const stubbed = new Set(this.compaction.plan.stubSeqs);
    const texts: string[] = [];
    for (const entry of contextEntries(this.ledger, this.compaction.plan)) {
      const last = entry.to ?? entry.seq;
      for (const message of this.transcript) {
        if (message.seq < entry.seq || message.seq > last || stubbed.has(message.seq)) continue;
        // Stored summaries inside a range were never applied or were superseded: the builder skips them.
        if (entry.role === 'range' && message.key.startsWith('summary:')) continue;
        texts.push(JSON.stringify(message.message.content));
      }
    }
    return texts.join('\n');
  }

  private readonly summarizer = async (request: (maxTokens: number) => string, maxTokens: number) => {
    this.summarizerCalls += 1;
    const prompt = request(maxTokens);
    this.summarizerInputs.push(prompt);
    return {
      text: factKeepingSummary(prompt),
      usage: {
        inputTokens: estimateTokens(prompt),
        outputTokens: 100,
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
      },
      maxTokens,
    };
  };

  private source(): SummarySource {
    return {
      messageAt: async (seq) => this.transcript.find((entry) => entry.seq === seq) ?? null,
      messagesUpTo: async (toSeq) => this.transcript.filter((entry) => entry.seq <= toSeq),
      messageByKey: async (key) => this.transcript.find((entry) => entry.key === key) ?? null,
    };
  }

  /** Stores a prepared summary (or finds the reused one), as the activity does. */
  private storeSummary(prepared: PreparedSummary): LedgerEntry {
    if (prepared.kind === 'reuse') {
      const { seq, key, message } = prepared.entry;
      return ledgerEntryFor(seq, key, message);
    }
    const seq = (this.transcript.at(-1)?.seq ?? 0) + 1;
    this.transcript.push({ seq, key: prepared.key, message: prepared.message });
    return ledgerEntryFor(seq, prepared.key, prepared.message);
  }

  private setCompaction(next: CompactionState, pressure: number): void {
    this.compaction = { ...next, lastInputTokens: pressure, lastCoveredSeq: lastSeqOf(this.ledger) };
  }

  private notice(text: string, stepNumber: number): void {
    this.notices.push(text);
    if (!this.compactedAt.includes(stepNumber)) this.compactedAt.push(stepNumber);
    this.compaction = { ...this.compaction, notices: this.compaction.notices + 1 };
    this.append(`notice:${this.compaction.notices}`, userText(`[goalrun] ${text}`));
    this.compaction = { ...this.compaction, lastCoveredSeq: lastSeqOf(this.ledger) };
  }
}

/** A tool output of about `tokens` estimated tokens, with the given fact lines in the middle. */
export function outputOf(tokens: number, tag: string, facts: string[] = []): string {
  const lines: string[] = [];
  let size = 0;
  let n = 0;
  while (size < tokens) {
    const line = `${tag} filler line number ${++n}`;
    lines.push(line);
    size += estimateTokens(`${line}\n`);
  }
  lines.splice(Math.floor(lines.length / 2), 0, ...facts);
  return lines.join('\n');
}
