/**
 * How the workflow saves its control state without sending all of it every step: a write names the
 * fields that changed (one or two levels deep, `steps` or `compaction.plan`), and the store merges
 * them into the saved state. A full write replaces the state and also adds a checkpoint row.
 */
import type { GoalStatus } from './goal';

/** A change to the saved goal state. */
export interface StateWrite {
  /** Changed fields by path: `field` or `field.subfield`. */
  set: Record<string, unknown>;
  /** The whole state (a checkpoint): replaces what is saved and is kept as a checkpoint row. */
  full?: boolean;
  /** Mirrored on the session row for `list` and `status`. */
  status?: GoalStatus;
  reason?: string | null;
}

/** Applies a write to a saved state (a plain JSON object); returns the new state. */
export function applyStateWrite(
  saved: Record<string, unknown> | null,
  write: StateWrite,
): Record<string, unknown> {
  const next: Record<string, unknown> = write.full ? {} : { ...(saved ?? {}) };
  for (const [path, value] of Object.entries(write.set)) {
    const dot = path.indexOf('.');
    if (dot < 0) {
      next[path] = value;
      continue;
    }
    const head = path.slice(0, dot);
    const parent = next[head];
    next[head] = {
      ...(parent && typeof parent === 'object' ? (parent as Record<string, unknown>) : {}),
      [path.slice(dot + 1)]: value,
    };
  }
  return next;
}

/** Fields whose sub-fields are tracked one by one: they hold parts that change at very different rates. */
export const NESTED_STATE_FIELDS = ['compaction'] as const;

/** Fields a per-step write leaves out: display-only or rebuilt on resume. Full writes carry them. */
export const PER_STEP_SKIPPED_FIELDS = ['ledger', 'recent', 'changes'] as const;

/** Tracks what the store already holds, so each write carries only what changed since. */
export class StateWriteTracker {
  private saved = new Map<string, string>();

  /** The write that brings the store up to `state`; `full` sends every field but the ledger. */
  writeFor(state: object, full = false): StateWrite {
    const set: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(state)) {
      if (key === 'ledger') continue;
      if (!full && (PER_STEP_SKIPPED_FIELDS as readonly string[]).includes(key)) continue;
      if (!full && (NESTED_STATE_FIELDS as readonly string[]).includes(key) && isObject(value)) {
        for (const [sub, subValue] of Object.entries(value)) this.collect(set, `${key}.${sub}`, subValue);
        continue;
      }
      if (full) set[key] = value;
      else this.collect(set, key, value);
    }
    return full ? { set, full: true } : { set };
  }

  /** Records that a write reached the store. */
  committed(write: StateWrite): void {
    if (write.full) this.saved.clear();
    for (const [path, value] of Object.entries(write.set)) {
      if (write.full && isObject(value) && (NESTED_STATE_FIELDS as readonly string[]).includes(path)) {
        for (const [sub, subValue] of Object.entries(value)) this.saved.set(`${path}.${sub}`, json(subValue));
      }
      this.saved.set(path, json(value));
    }
  }

  private collect(set: Record<string, unknown>, path: string, value: unknown): void {
    if (this.saved.get(path) !== json(value)) set[path] = value;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function json(value: unknown): string {
  return JSON.stringify(value ?? null);
}
