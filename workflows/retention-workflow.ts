/**
 * The workflow a configured retention's Temporal Schedule starts once a day (issue 17): one activity
 * that runs the clean. A workflow of its own, so goal workflows and their histories are untouched.
 */
import { proxyActivities } from '@temporalio/workflow';
import type { RetentionActivities } from '../activities/retention-activities';
import type { RetentionInput, RetentionResult } from '../core/retention-schedule';

/** How long one clean may take: thousands of sessions, each one transaction and a few Temporal calls. */
const CLEAN_TIMEOUT = '1 hour';
/** A clean that stops heartbeating (its worker died) is retried on another worker after this. */
const CLEAN_HEARTBEAT_TIMEOUT = '2 minutes';
/** Attempts of one day's clean; the next day's runs anyway. */
const CLEAN_MAX_ATTEMPTS = 3;

const { cleanOldSessions } = proxyActivities<RetentionActivities>({
  startToCloseTimeout: CLEAN_TIMEOUT,
  heartbeatTimeout: CLEAN_HEARTBEAT_TIMEOUT,
  retry: { maximumAttempts: CLEAN_MAX_ATTEMPTS },
});

/** Runs the daily clean with the configured rule; returns how many sessions went. */
export async function retentionWorkflow(input: RetentionInput): Promise<RetentionResult> {
  return cleanOldSessions(input);
}
