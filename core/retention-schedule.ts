/**
 * The daily clean that a configured `retention: { older_than, keep }` runs as a Temporal Schedule
 * (issue 17, retention). Pure: the schedule's id, when it fires, and what its workflow is given, so
 * the worker that creates it and `goalrun clean --schedule` that shows it agree.
 */
import { DEFAULT_RETENTION_KEEP, parseRetentionDuration } from './retention';

/** The hour (UTC) the daily clean runs at: at night for most, and off the top of the hour. */
export const RETENTION_SCHEDULE_HOUR_UTC = 3;
/** The minute of that hour. */
export const RETENTION_SCHEDULE_MINUTE = 17;
/** A clean missed while Temporal was down is still run if the server is back within this. */
export const RETENTION_CATCHUP_WINDOW = '1 day';
/** The workflow type the schedule starts (workflows/retention-workflow.ts). */
export const RETENTION_WORKFLOW_TYPE = 'retentionWorkflow';

/** What the scheduled workflow is given: the config's rule, small and plain. */
export interface RetentionInput {
  /** Only sessions idle longer than this duration (`30d`, `12h`); every age when absent. */
  olderThan?: string;
  /** Stopped sessions kept per project, newest first. */
  keep: number;
}

/** What one scheduled clean did. */
export interface RetentionResult {
  /** Sessions removed. */
  removed: number;
  /** Sessions chosen but left alone (busy with another operation, or found running). */
  skipped: number;
}

/** The config section: `retention: { older_than, keep }`. */
export interface RetentionConfig {
  older_than?: string;
  keep?: number;
}

/** The schedule of a task queue (one per store, as the queue is): two stores on one namespace never meet. */
export function retentionScheduleId(taskQueue: string): string {
  return `${taskQueue}-retention`;
}

/** The workflow input of a config section; throws on a bad duration (the schema already refused it). */
export function retentionInputOf(config: RetentionConfig): RetentionInput {
  if (config.older_than !== undefined && parseRetentionDuration(config.older_than) === null)
    throw new Error(`retention.older_than must be a duration like 30d, got "${config.older_than}"`);
  return {
    ...(config.older_than === undefined ? {} : { olderThan: config.older_than }),
    keep: config.keep ?? DEFAULT_RETENTION_KEEP,
  };
}
