/**
 * Model answers whose store write failed, kept in the worker until a later attempt of the same step
 * stores them (issue 24 item 4): the provider was paid for the answer, so asking it again would pay
 * twice. The attempt itself first waits a store outage out (store-outage.ts, as a tool result does);
 * this covers what it cannot wait for: an outage longer than the attempt, or a write that failed
 * for another reason. A retry on another worker finds nothing here and asks again; the lost answer is
 * then counted as a billed attempt (paid-attempts.ts).
 */
import type { ModelResponse } from './providers/types';

/** How many answers one worker keeps at most (each is one step of one goal waiting for its store). */
export const KEPT_ANSWERS_MAX = 64;

/** An answer the store has not taken yet, and the attempt that received it. */
export interface KeptAnswer {
  /** The activity that received it (core/paid-calls.ts activityInstance): only its own attempts reuse it. */
  instance: string;
  attempt: number;
  response: ModelResponse;
}

/** The kept answers of this worker, by session and step key; the oldest goes first when full. */
export class KeptAnswers {
  private readonly answers = new Map<string, KeptAnswer>();

  constructor(private readonly max = KEPT_ANSWERS_MAX) {}

  keep(sessionId: string, assistantKey: string, answer: KeptAnswer): void {
    const key = keyOf(sessionId, assistantKey);
    this.answers.delete(key);
    this.answers.set(key, answer);
    while (this.answers.size > this.max) this.answers.delete(this.answers.keys().next().value as string);
  }

  get(sessionId: string, assistantKey: string): KeptAnswer | undefined {
    return this.answers.get(keyOf(sessionId, assistantKey));
  }

  /** The answer is stored (or will never be): it goes. */
  drop(sessionId: string, assistantKey: string): void {
    this.answers.delete(keyOf(sessionId, assistantKey));
  }

  get size(): number {
    return this.answers.size;
  }
}

function keyOf(sessionId: string, assistantKey: string): string {
  return `${sessionId}\n${assistantKey}`;
}
