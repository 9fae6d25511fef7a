/**
 * A goal's compaction loop without Temporal, for tests: an in-memory transcript, the ledger as the
 * workflow keeps it (appendLedger, so folding runs), and the decision sequence workflows/compaction.ts
 * runs, called, not copied (core/compaction/compaction-decisions.ts), with prepareSummary as the
 * summarize activity runs it. The summarizer is a fake that keeps every fact line it is shown; it can
 * be told to fail, to say it dropped the earlier summary, or the "worker" to die after storing.
 */
import { computeBudget } from '../../../core/budget';
import {
  autoCompactDecision,
  autoCompactRequest,
  type CompactionRunRequest,
  type CompactionStep,
  planCompactionRun,
  pressureOf,
  prunedOutcome,
  summarizerFailureOutcome,
  summaryOutcome,
  summaryRequestOf,
} from '../../../core/compaction/compaction-decisions';
import {
  type PreparedSummary,
  prepareSummary,
  type SummarySource,
} from '../../../core/compaction/prepare-summary';
import { prunedContextTokens } from '../../../core/compaction/prune';
import { type CompactionState, initialCompactionState } from '../../../core/compaction/state';
import { compactionTargets } from '../../../core/compaction/targets';
import { contextEntries } from '../../../core/context-plan';
import { appendLedger, type LedgerEntry, lastSeqOf } from '../../../core/ledger';
import { ledgerEntryFor } from '../../../core/ledger-entry';
import { type StoredMessage, type TranscriptEntry, textOf, userText } from '../../../core/messages';
import { GENERIC_CARD } from '../../../core/model-card';
import { FIRST_MESSAGE_KEY, KEY_PREFIX, storeKeys } from '../../../core/store-keys';
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

/** How the next summarizer call goes (`drops-previous`: its result says it did not carry the earlier summary). */
export type SummarizerBehaviour = 'ok' | 'fail' | 'crash-after-store' | 'drops-previous';

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

/** What a compaction is asked to do: what the workflow's compact() is asked. */
export type SimCompactRequest = CompactionRunRequest;

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
    this.append(
      FIRST_MESSAGE_KEY,
      userText('Objective: build the widget. FACT-0: the objective is the widget'),
    );
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
    return pressureOf(this.compaction, this.ledger);
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
    this.append(storeKeys.assistant(1, this.steps), {
      role: 'assistant',
      content: [
        { type: 'tool-call', toolCallId: id, toolName: 'bash', input: { command: `run ${this.steps}` } },
      ],
    });
    const spoolId = estimateTokens(output) > 500 ? ++this.spools : undefined;
    this.append(
      storeKeys.toolResult(id),
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
    this.append(storeKeys.steering(`${this.transcript.length}`), userText(text));
  }

  /** The auto-compact check before the next step: the workflow's decision (workflows/compaction.ts autoCompact). */
  async beforeStep(): Promise<void> {
    const decision = autoCompactDecision({
      compaction: this.compaction,
      ledger: this.ledger,
      estimateTokens: this.pressure(),
      stepNumber: this.steps + 1,
      legacy: this.options.legacy,
    });
    if (!decision) return;
    this.decisions.push(decision.action);
    const request = autoCompactRequest(decision.action);
    if (request) await this.compact(request);
  }

  /**
   * A compaction: the workflow's decision sequence (workflows/compaction.ts compact) around a fake
   * summarize activity that stores its summary as the real one does.
   */
  async compact(
    request: SimCompactRequest,
  ): Promise<'none' | 'pruned' | 'summarized' | 'failed' | 'discarded'> {
    const stepNumber = this.steps + 1;
    const planned = planCompactionRun({
      compaction: this.compaction,
      ledger: this.ledger,
      measured: this.pressure(),
      request,
      legacy: this.options.legacy,
    });
    const summaryRequest = summaryRequestOf(planned);
    if (!summaryRequest) {
      const outcome = prunedOutcome(planned, stepNumber);
      if (!outcome) return 'none';
      this.apply(outcome, stepNumber);
      return 'pruned';
    }
    const behaviour = this.next;
    this.next = 'ok';
    const fail = (reason: string) => {
      this.apply(summarizerFailureOutcome(this.compaction, planned.pruned, reason, 'sim'), stepNumber);
      return 'failed' as const;
    };
    const summaryInput = { ...summaryRequest, objective: 'build the widget' };
    let prepared: PreparedSummary;
    if (behaviour === 'fail') {
      this.summarizerCalls += 1;
      // Outside a recovery a failed summarizer fails the compaction; in one, the extracted summary is used.
      if (!request.recovery) return fail('summarizer down');
      prepared = await prepareSummary(this.source(), { ...summaryInput, extracted: true }, this.summarizer);
    } else {
      prepared = await prepareSummary(this.source(), summaryInput, this.summarizer);
    }
    const entry = this.storeSummary(prepared);
    // The worker died after the summary was stored: the workflow never saw the result.
    if (behaviour === 'crash-after-store') return fail('worker lost');
    const outcome = summaryOutcome(
      planned,
      {
        entry,
        usage: prepared.kind === 'new' ? prepared.usage : null,
        extracted: prepared.kind === 'new' && prepared.extracted,
        carriesPrevious: behaviour !== 'drops-previous',
      },
      stepNumber,
    );
    if (outcome.kind === 'dropped-previous') return fail(outcome.reason);
    if (outcome.kind === 'summarized') {
      this.ledger = outcome.ledger;
      this.appliedSummaries.push(textOf(this.transcript.find((e) => e.seq === entry.seq)!.message));
    }
    this.apply(outcome, stepNumber);
    return outcome.kind;
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
        if (entry.role === 'range' && message.key.startsWith(KEY_PREFIX.summary)) continue;
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

  /** Stores a compaction's outcome and its notice, as workflows/compaction-host.ts does. */
  private apply(outcome: CompactionStep, stepNumber: number): void {
    this.compaction = {
      ...outcome.compaction,
      lastInputTokens: outcome.pressure,
      lastCoveredSeq: lastSeqOf(this.ledger),
    };
    this.notices.push(outcome.note);
    if (!this.compactedAt.includes(stepNumber)) this.compactedAt.push(stepNumber);
    this.compaction = { ...this.compaction, notices: this.compaction.notices + 1 };
    this.append(storeKeys.notice(1, this.compaction.notices), userText(`[goalrun] ${outcome.note}`));
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
