/**
 * Where a fork cuts its parent (issue 17 §3), as pure rules: the end of step N in the transcript, the
 * saved state the fork starts from, and that state's message sequence numbers moved to the fork's
 * copies (a message's seq is global, so each copy gets a new one, in the same order).
 */
import type { TranscriptEntry } from './messages';
import { KEY_PREFIX } from './store-keys';

/** A saved goal state, as far as a fork reads and rewrites it. */
export type SavedState = Record<string, unknown> & { checkpointSeq?: number; steps?: number };

/** The step number of an assistant message key (`step:N@E`), or null for other keys. */
export function stepOfKey(key: string): number | null {
  if (!key.startsWith(KEY_PREFIX.assistant)) return null;
  const step = Number.parseInt(key.slice(KEY_PREFIX.assistant.length), 10);
  return Number.isInteger(step) ? step : null;
}

/** The steps a transcript holds, in order. */
export function stepsIn(transcript: TranscriptEntry[]): number[] {
  return transcript.map((entry) => stepOfKey(entry.key)).filter((step): step is number => step !== null);
}

/**
 * The seq of the last message of step N: its assistant message, or the last tool result that follows
 * it before anything else (the results of its calls). Null when the transcript has no step N.
 */
export function endOfStep(transcript: TranscriptEntry[], step: number): number | null {
  const at = transcript.findIndex((entry) => stepOfKey(entry.key) === step);
  if (at < 0) return null;
  let end = transcript[at].seq;
  for (const entry of transcript.slice(at + 1)) {
    if (entry.message.role !== 'tool') break;
    end = entry.seq;
  }
  return end;
}

/**
 * The saved state a fork at `cutSeq` starts from: of the checkpoints and the latest state, the one
 * that accounts for the most of the transcript without going past the cut (the resume then recounts
 * the steps stored after it, up to the cut). A state saved without a seq (the one written when the
 * session opened) accounts for none. Null when none does.
 */
export function stateAtCut(states: SavedState[], cutSeq: number): SavedState | null {
  let best: SavedState | null = null;
  for (const state of states) {
    // The state saved when the session opened accounts for no message yet.
    const seq = typeof state.checkpointSeq === 'number' ? state.checkpointSeq : 0;
    if (seq > cutSeq) continue;
    if (!best || seq >= (best.checkpointSeq ?? 0)) best = { ...state, checkpointSeq: seq };
  }
  return best;
}

/** Old seq → new seq of every copied message. */
export type SeqMap = ReadonlyMap<number, number>;

/** The new seq of the newest copied message at or before an old seq (0 when none). */
function floorSeq(map: SeqMap, old: number): number {
  let found = 0;
  for (const [from, to] of map) if (from <= old && to > found) found = to;
  return found;
}

/** The new seq of the oldest copied message at or after an old seq (past the end: one more than the last). */
function ceilSeq(map: SeqMap, old: number): number {
  let found = Number.POSITIVE_INFINITY;
  let last = 0;
  for (const [from, to] of map) {
    if (from >= old && to < found) found = to;
    last = Math.max(last, to);
  }
  return Number.isFinite(found) ? found : last + 1;
}

/** Seqs that name copied messages, moved; the others dropped. */
function exactSeqs(map: SeqMap, seqs: unknown): number[] {
  return Array.isArray(seqs)
    ? seqs.map((seq) => map.get(seq as number)).filter((seq): seq is number => seq !== undefined)
    : [];
}

/**
 * A saved state with every message seq it holds moved to the fork's copies: the checkpoint seq, the
 * compaction's covered seq and its context plan (first, summary, kept, tail start, stubs, elided).
 */
export function remapStateSeqs(state: SavedState, map: SeqMap): SavedState {
  const next: SavedState = { ...state, ledger: [] };
  if (typeof state.checkpointSeq === 'number') next.checkpointSeq = floorSeq(map, state.checkpointSeq);
  const compaction = state.compaction as Record<string, unknown> | undefined | null;
  if (compaction) {
    const plan = compaction.plan as Record<string, unknown> | undefined;
    next.compaction = {
      ...compaction,
      ...(typeof compaction.lastCoveredSeq === 'number'
        ? { lastCoveredSeq: floorSeq(map, compaction.lastCoveredSeq) }
        : {}),
      ...(plan
        ? {
            plan: {
              ...plan,
              firstSeq: map.get(plan.firstSeq as number) ?? floorSeq(map, plan.firstSeq as number),
              ...(typeof plan.summarySeq === 'number' ? { summarySeq: map.get(plan.summarySeq) } : {}),
              keptSeqs: exactSeqs(map, plan.keptSeqs),
              fromSeq: plan.fromSeq === 0 ? 0 : ceilSeq(map, plan.fromSeq as number),
              stubSeqs: exactSeqs(map, plan.stubSeqs),
              elideArgsSeqs: exactSeqs(map, plan.elideArgsSeqs),
            },
          }
        : {}),
    };
  }
  return next;
}

/** What a fork's saved state records until its first run: the parent and the step it starts after. */
export interface ForkOrigin {
  parentId: string;
  atStep: number;
}

/** The key of a fork's saved state that holds its ForkOrigin (dropped by the first resume). */
export const FORK_ORIGIN_KEY = 'forkedFrom';

/** The reason a fork's row carries until it runs (cli/commands/fork-command.ts). */
export function forkReason(origin: ForkOrigin): string {
  return `forked from ${origin.parentId} at step ${origin.atStep}`;
}

const FORK_REASON = /^forked from (\S+) at step (\d+)$/;

/**
 * Where a fork that has not run yet comes from, or null for any other session: from its saved state,
 * or (forks made before the state recorded it) from the reason its cancelled row still carries.
 */
export function forkOriginOf(
  goalState: unknown,
  row?: { status?: string | null; reason?: string | null },
): ForkOrigin | null {
  const recorded = (goalState as Record<string, unknown> | null | undefined)?.[FORK_ORIGIN_KEY] as
    | Partial<ForkOrigin>
    | undefined;
  if (typeof recorded?.parentId === 'string' && Number.isInteger(recorded.atStep))
    return { parentId: recorded.parentId, atStep: recorded.atStep as number };
  const match = row?.status === 'cancelled' ? FORK_REASON.exec(row.reason ?? '') : null;
  return match ? { parentId: match[1], atStep: Number(match[2]) } : null;
}
