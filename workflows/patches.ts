/**
 * Patch ids of workflow changes that decide differently on a replay (Temporal's `patched()`): a run
 * started before the change keeps the old decisions, one started after records the marker and takes
 * the new ones. Each is asked once, when an execution starts, so a run never mixes the two.
 */

/** Compaction keeps every steering message verbatim (within a budget), not only the latest three. */
export const KEEP_EVERY_STEERING_PATCH = 'keep-every-steering-message';
