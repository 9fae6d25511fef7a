/**
 * A fake OpenAI-compatible model for compaction tests: main requests are answered from a script
 * by their number, summarizer requests (no tools) by a summarizer that keeps the facts it is shown.
 */
import type { TranscriptEntry } from '../../core/messages';
import {
  type ChatRequestBody,
  isSummaryRequest,
  type TestResponse,
  type TestTurn,
} from './openai-test-server';

/** One request as the tests inspect it. */
export interface SeenRequest {
  kind: 'main' | 'summary';
  body: ChatRequestBody;
  chars: number;
}

/** Fact lines a good summarizer keeps: decisions, facts and exact errors (by the tests' own convention). */
const FACT_LINE = /(DECISION-\d+:[^\\\n"]*|FACT-\d+:[^\\\n"]*|ERROR E\d+:[^\\\n"]*)/g;

/**
 * Builds a summary with the six sections from the summarizer's input, keeping every fact line it is
 * given, those of the earlier summary included: a faithful summarizer, so that a fact can only be lost
 * by compaction not showing it the earlier summary.
 */
export function summarizeLikeAModel(input: string): string {
  const facts = [...new Set(input.match(FACT_LINE) ?? [])];
  return [
    '## Goal',
    'Continue the objective stated in the first message.',
    '## Decisions and findings',
    ...facts.filter((fact) => !fact.startsWith('ERROR')).map((fact) => `- ${fact}`),
    '## Files modified',
    '(see the list from the tool log)',
    '## Current state',
    ...facts.filter((fact) => fact.startsWith('ERROR')).map((fact) => `- ${fact}`),
    '## Next steps',
    '- keep going',
    '## References',
    '- none',
  ].join('\n');
}

/** A bash call that prints `lines` lines of filler, each about 40 characters and tagged, to fill a context. */
export function fillerCall(tag: string, lines: number) {
  return { name: 'bash', args: { command: `seq 1 ${lines} | sed 's/^/${tag} filler line number /'` } };
}

/** A scripted model for the OpenAI test server's fallback. */
export function compactionModel(options: {
  main: (n: number) => TestResponse | Promise<TestResponse>;
  summary?: (n: number, body: ChatRequestBody) => TestResponse | undefined;
}) {
  const seen: SeenRequest[] = [];
  let mains = 0;
  let summaries = 0;
  const fallback = (body: ChatRequestBody): TestResponse | Promise<TestResponse> => {
    const chars = JSON.stringify(body.messages ?? []).length;
    if (isSummaryRequest(body)) {
      summaries += 1;
      seen.push({ kind: 'summary', body, chars });
      const scripted = options.summary?.(summaries, body);
      if (scripted) return scripted;
      const input = JSON.stringify(body.messages ?? []);
      return { text: summarizeLikeAModel(input) } satisfies TestTurn;
    }
    mains += 1;
    seen.push({ kind: 'main', body, chars });
    return options.main(mains);
  };
  return { fallback, seen };
}

/** The "[goalrun] compacted …" notices among a session's stored messages, in order. */
export function compactionNotices(messages: TranscriptEntry[]): string[] {
  return messages
    .map((m) => (m.message.content[0] as { text?: string }).text ?? '')
    .filter((text) => text.startsWith('[goalrun] compacted'));
}

/** Problems with tool-call pairing in a chat request: every call answered once, no orphan result. */
export function pairingProblems(body: ChatRequestBody): string[] {
  const problems: string[] = [];
  const open = new Map<string, number>();
  for (const [index, message] of (body.messages ?? []).entries()) {
    for (const call of message.tool_calls ?? []) open.set(call.id, index);
    if (message.role === 'tool') {
      const id = message.tool_call_id ?? '';
      if (!open.has(id)) problems.push(`message ${index}: result for unknown call ${id}`);
      open.delete(id);
    } else if (message.role === 'assistant' || message.role === 'user') {
      // A new turn: every call of the previous assistant message must have been answered.
      for (const [id, at] of open) if (at < index) problems.push(`call ${id} at ${at} has no result`);
      for (const [id, at] of [...open]) if (at < index) open.delete(id);
    }
  }
  for (const [id] of open) problems.push(`call ${id} has no result`);
  return problems;
}
