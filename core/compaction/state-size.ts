/**
 * How big the control state a goal workflow carries is (issue 9.9): the JSON bytes of its goal state,
 * ledger included, as Temporal's JSON payload converter encodes it for continue-as-new and queries.
 * `goalrun policy --json` shows the figure; the budget is CONTROL_STATE_BUDGET_BYTES.
 */
import type { GoalState } from '../goal';
import { messageCount } from '../ledger';
import { CONTROL_STATE_BUDGET_BYTES } from './thresholds';

/** UTF-8 bytes of a string, counted without Buffer or TextEncoder (workflow code has neither for sure). */
export function utf8Bytes(text: string): number {
  let bytes = 0;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff && index + 1 < text.length) {
      // A surrogate pair is one code point of four bytes.
      bytes += 4;
      index++;
    } else bytes += 3;
  }
  return bytes;
}

/** UTF-8 bytes of a value's JSON. */
export function jsonBytes(value: unknown): number {
  return utf8Bytes(JSON.stringify(value) ?? '');
}

/** The control state's size: all of it, its ledger, and how the ledger is kept. */
export interface ControlStateSize {
  /** JSON bytes of the whole goal state, as the workflow carries it over continue-as-new. */
  bytes: number;
  /** JSON bytes of the ledger alone. */
  ledgerBytes: number;
  /** Ledger entries… */
  ledgerEntries: number;
  /** …and the stored messages they stand for (a folded range counts all of its messages). */
  ledgerMessages: number;
  budgetBytes: number;
}

/** JSON bytes of what the workflow carries. */
export function controlStateBytes(state: GoalState): number {
  return jsonBytes(state);
}

/** The figures `policy --json` shows about the control state. */
export function controlStateSize(state: GoalState): ControlStateSize {
  return {
    bytes: controlStateBytes(state),
    ledgerBytes: jsonBytes(state.ledger),
    ledgerEntries: state.ledger.length,
    ledgerMessages: messageCount(state.ledger),
    budgetBytes: CONTROL_STATE_BUDGET_BYTES,
  };
}
