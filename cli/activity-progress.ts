/**
 * What a running goal is doing right now, from Temporal: the model or tool call in progress (its
 * pending activity), since when, and whether it is being retried after a failure. The call's
 * one-line summary (e.g. `bash: npm test`) is on its scheduled event; it is read once per call from
 * the newest end of the history.
 */
import type { Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { decodeRawPayload, rawFailureMessage } from './payload-decode';

/** Newest events read to find a pending call's scheduled event. */
const RECENT_EVENTS_PAGE = 50;

/** Names for activity types whose calls carry no summary. */
const ACTIVITY_NAMES: Record<string, string> = {
  modelStep: 'model call',
  runTool: 'tool call',
  summarize: 'summarizing the context',
};

type PendingActivity = temporal.api.workflow.v1.IPendingActivityInfo;

/** The call a goal is waiting on. */
export interface CallProgress {
  activityId: string;
  /** The call's summary (`model step 3 · openai:gpt-4o`, `bash: npm test`) or its kind. */
  label: string;
  /** When the call was first scheduled (retries included), if known. */
  since: Date | null;
  attempt: number;
  /** Set while the call waits for its next attempt or runs one after a failure. */
  lastFailure: string | null;
}

/** Reads pending calls' summaries and remembers them (one history read per call). */
export class ActivityProgressReader {
  private readonly scheduled = new Map<string, { summary: string | null; at: Date | null }>();

  constructor(
    private readonly client: Client,
    private readonly workflowId: string,
  ) {}

  /** The call in progress among the pending activities of a description, or null. */
  async current(pending: PendingActivity[] | null | undefined, runId: string): Promise<CallProgress | null> {
    const activity = pending?.[0];
    if (!activity?.activityId) return null;
    const id = activity.activityId;
    if (!this.scheduled.has(id)) this.scheduled.set(id, await this.readScheduled(id, runId));
    const known = this.scheduled.get(id);
    const type = activity.activityType?.name ?? 'activity';
    const attempt = activity.attempt ?? 1;
    const failure = attempt > 1 ? activity.lastFailure : null;
    return {
      activityId: id,
      label: known?.summary ?? ACTIVITY_NAMES[type] ?? type,
      since: known?.at ?? timestampDate(activity.scheduledTime),
      attempt,
      lastFailure: failure
        ? await rawFailureMessage(this.client.options.loadedDataConverter, failure).catch(
            (err: Error) => err.message,
          )
        : null,
    };
  }

  private async readScheduled(
    activityId: string,
    runId: string,
  ): Promise<{ summary: string | null; at: Date | null }> {
    try {
      const response = await this.client.workflowService.getWorkflowExecutionHistoryReverse({
        namespace: this.client.options.namespace,
        execution: { workflowId: this.workflowId, runId },
        maximumPageSize: RECENT_EVENTS_PAGE,
      });
      const event = (response.history?.events ?? []).find(
        (each) => each.activityTaskScheduledEventAttributes?.activityId === activityId,
      );
      if (!event) return { summary: null, at: null };
      const payload = event.userMetadata?.summary;
      let summary: string | null = null;
      if (payload) {
        const value = await decodeRawPayload(this.client.options.loadedDataConverter, payload);
        summary = typeof value === 'string' && value.trim() !== '' ? value : null;
      }
      return { summary, at: timestampDate(event.eventTime) };
    } catch {
      return { summary: null, at: null };
    }
  }
}

function timestampDate(
  timestamp: { seconds?: unknown; nanos?: number | null } | null | undefined,
): Date | null {
  const seconds = Number(timestamp?.seconds ?? 0);
  if (!seconds) return null;
  return new Date(seconds * 1000 + Math.floor((timestamp?.nanos ?? 0) / 1e6));
}
