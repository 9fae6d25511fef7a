/**
 * The answers the goal's update handlers wait for: the main loop records one per request once it has
 * carried the request out (or refused it), and the handler that queued the request returns it, or
 * fails with REQUEST_REFUSED_TYPE. The first answer to a request stands.
 */
import { ApplicationFailure, condition } from '@temporalio/workflow';

/** The failure type of a request the goal refused or could not carry out (the update fails with it). */
export const REQUEST_REFUSED_TYPE = 'GoalRequestRefused';

/** What a waiting handler gets back. */
export type RequestAnswer = { ok: true; value: unknown } | { ok: false; message: string };

/** The answers of one run, by request id. */
export class RequestAnswers {
  private readonly answers = new Map<string, RequestAnswer>();

  /** Whether the request has been answered. */
  has(id: string): boolean {
    return this.answers.has(id);
  }

  /** Answers a request, unless it has an answer already. */
  set(id: string, answer: RequestAnswer): void {
    if (!this.answers.has(id)) this.answers.set(id, answer);
  }

  /** Waits for the answer to a request: its value, or an ApplicationFailure when it was refused. */
  async waitFor<T>(id: string): Promise<T> {
    await condition(() => this.answers.has(id));
    const answer = this.answers.get(id)!;
    if (!answer.ok) {
      throw ApplicationFailure.create({
        message: answer.message,
        type: REQUEST_REFUSED_TYPE,
        nonRetryable: true,
      });
    }
    return answer.value as T;
  }
}
