/** Reading Temporal failures inside workflow code: what type they carry and what they said. */
import { FailureType } from '../core/errors';

type FailureChain = { type?: string; message?: string; cause?: unknown } | undefined;

/** The failure type nearest the top of an activity failure's cause chain, if any. */
export function failureType(err: unknown): string | undefined {
  let current = err as FailureChain;
  while (current) {
    if (current.type) return current.type;
    current = current.cause as FailureChain;
  }
  return undefined;
}

/** The first `details` entry of the failure of this type in the chain (an ApplicationFailure's details). */
export function failureDetail(err: unknown, type: string): unknown {
  let current = err as (FailureChain & { details?: unknown[] }) | undefined;
  while (current) {
    if (current.type === type) return current.details?.[0];
    current = current.cause as typeof current;
  }
  return undefined;
}

/** The innermost failure message: what the provider or tool actually said. */
export function innermostMessage(err: unknown): string {
  let current = err as FailureChain;
  let message = current?.message ?? String(err);
  while (current?.cause) {
    current = current.cause as FailureChain;
    if (current?.message) message = current.message;
  }
  return message;
}

/** Why a goal failed, as its status reason says it. */
export function goalFailureReason(err: unknown): string {
  const message = innermostMessage(err);
  return failureType(err) === FailureType.ContextOverflow ? `context overflow: ${message}` : message;
}
