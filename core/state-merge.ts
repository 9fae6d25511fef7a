/**
 * Merging instead of overwriting: a piece of workflow code that read the state, awaited an activity,
 * and now writes what it computed must not undo what a command changed meanwhile (a /auto-compact off
 * or a /model switch during a compaction's summarizer call). Only the fields it changed itself are
 * applied; the rest keep their current value.
 */

/** `current` with the changes `ours` made to `base`; plain objects are merged field by field. */
export function mergeChanges<T>(base: T, ours: T, current: T): T {
  if (sameValue(ours, base)) return current;
  if (!isPlainObject(base) || !isPlainObject(ours) || !isPlainObject(current)) return ours;
  const merged: Record<string, unknown> = { ...current };
  for (const key of Object.keys(ours)) {
    // Defined, not assigned: assigning to a key named `__proto__` would set the object's prototype.
    Object.defineProperty(merged, key, {
      value: mergeChanges(ownField(base, key), ours[key], ownField(current, key)),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  for (const key of Object.keys(base)) {
    // Own fields only: a key such as `toString` is "in" every object through its prototype.
    if (!hasOwn(ours, key)) delete merged[key];
  }
  return merged as T;
}

/** Structural equality of JSON-like values (key order does not matter). */
export function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, index) => sameValue(item, b[index]));
  }
  if (!isPlainObject(a) || !isPlainObject(b)) return false;
  const keys = Object.keys(a).filter((key) => a[key] !== undefined);
  const otherKeys = Object.keys(b).filter((key) => b[key] !== undefined);
  if (keys.length !== otherKeys.length) return false;
  return keys.every((key) => sameValue(a[key], b[key]));
}

function hasOwn(value: Record<string, unknown>, key: string): boolean {
  return Object.hasOwn(value, key);
}

function ownField(value: Record<string, unknown>, key: string): unknown {
  return hasOwn(value, key) ? value[key] : undefined;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
