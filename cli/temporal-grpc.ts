/**
 * The TemporalReader over the gRPC client: what the light commands fall back to when no HTTP API
 * is known or it does not answer, and what commands that already hold a client (watch, steer, run)
 * read through. Loaded only then: it brings @temporalio/client, its protobuf definitions and grpc-js.
 */
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import type { QueryName } from '../core/workflow-names';
import { PayloadCodecError } from '../worker/payload-codec';
import { decodeRawPayload, rawFailureMessage } from './payload-decode';
import { activityStateOf } from './temporal-http-decode';
import type {
  HistoryStart,
  ListedWorkflow,
  PollerKind,
  TemporalReader,
  WorkflowSummary,
} from './temporal-reader';

const { EventType, PendingActivityState, TaskQueueKind, TaskQueueType } = temporal.api.enums.v1;

/** Events read from the end of a history to find a failed workflow task. */
const REVERSE_HISTORY_PAGE = 20;

/** Whether an error of the SDK says the workflow does not exist. */
function isWorkflowNotFound(err: unknown): boolean {
  return (err as { name?: string })?.name === 'WorkflowNotFoundError';
}

function msOf(timestamp: { seconds?: unknown; nanos?: number | null } | null | undefined): number {
  return Number(timestamp?.seconds ?? 0) * 1000 + Math.floor((timestamp?.nanos ?? 0) / 1e6);
}

/** Reads goals through a connected gRPC client, in the client's namespace. */
export class GrpcTemporalReader implements TemporalReader {
  readonly transport = 'grpc' as const;

  constructor(private readonly client: Client) {}

  async describe(workflowId: string): Promise<WorkflowSummary | null> {
    try {
      const description = await this.client.workflow.getHandle(workflowId).describe();
      const converter = this.client.options.loadedDataConverter;
      const build = description.raw.workflowExecutionInfo?.versioningInfo?.deploymentVersion?.buildId;
      return {
        status: description.status.name,
        taskQueue: description.taskQueue,
        ...(build ? { build } : {}),
        pendingActivities: await Promise.all(
          (description.raw.pendingActivities ?? []).map(async (activity) => ({
            activityType: activity.activityType?.name ?? 'activity',
            attempt: activity.attempt ?? 0,
            lastFailure: activity.lastFailure
              ? await rawFailureMessage(converter, activity.lastFailure).catch((err: Error) => err.message)
              : null,
            state: activityStateOf(PendingActivityState[activity.state ?? 0]),
            lastAliveMs: msOf(activity.lastHeartbeatTime) || msOf(activity.lastStartedTime) || null,
          })),
        ),
        workflowTaskAttempt: description.raw.pendingWorkflowTask?.attempt ?? 0,
      };
    } catch (err) {
      if (isWorkflowNotFound(err)) return null;
      throw err;
    }
  }

  query<Result>(workflowId: string, query: QueryName<Result>): Promise<Result> {
    return this.client.workflow.getHandle(workflowId).query<Result>(query.name);
  }

  async historyStart(workflowId: string, pageSize: number): Promise<HistoryStart> {
    const response = await this.client.workflowService.getWorkflowExecutionHistory({
      namespace: this.client.options.namespace,
      execution: { workflowId },
      maximumPageSize: pageSize,
    });
    const events = response.history?.events ?? [];
    const started = events.find(
      (event) => event.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED,
    );
    const attributes = started?.workflowExecutionStartedEventAttributes;
    let input: unknown = null;
    const payload = attributes?.input?.payloads?.[0];
    if (payload) {
      try {
        input = await decodeRawPayload(this.client.options.loadedDataConverter, payload);
      } catch (err) {
        // A payload this process has no key for says so; anything else unreadable is simply unknown.
        if (err instanceof PayloadCodecError) throw err;
        input = null;
      }
    }
    const seconds = Number(started?.eventTime?.seconds ?? 0);
    let workflowTaskFailure: string | null = null;
    for (const event of events) {
      if (event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED) workflowTaskFailure = null;
      const failure = event.workflowTaskFailedEventAttributes?.failure;
      if (event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED && failure) {
        workflowTaskFailure = await rawFailureMessage(this.client.options.loadedDataConverter, failure).catch(
          (err: Error) => err.message,
        );
      }
    }
    return {
      eventCount: events.length,
      workflowTaskFailure,
      workflowTaskCompleted: events.some(
        (event) => event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED,
      ),
      startedAt: seconds > 0 ? new Date(seconds * 1000) : null,
      taskQueue: attributes?.taskQueue?.name ?? null,
      input: input ?? null,
    };
  }

  async lastWorkflowTaskFailure(workflowId: string): Promise<string | null> {
    const response = await this.client.workflowService.getWorkflowExecutionHistoryReverse({
      namespace: this.client.options.namespace,
      execution: { workflowId },
      maximumPageSize: REVERSE_HISTORY_PAGE,
    });
    for (const event of response.history?.events ?? []) {
      if (event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED) return null;
      const failure = event.workflowTaskFailedEventAttributes?.failure;
      if (event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED && failure) {
        return rawFailureMessage(this.client.options.loadedDataConverter, failure).catch(
          (err: Error) => err.message,
        );
      }
    }
    return null;
  }

  async listWorkflows(query: string, limit: number): Promise<ListedWorkflow[]> {
    const listed: ListedWorkflow[] = [];
    for await (const info of this.client.workflow.list({ query, pageSize: limit })) {
      listed.push({ workflowId: info.workflowId, startedAt: info.startTime, taskQueue: info.taskQueue });
      if (listed.length >= limit) break;
    }
    return listed;
  }

  async pollerAccessTimes(taskQueue: string, kind: PollerKind): Promise<number[]> {
    const response = await this.client.workflowService.describeTaskQueue({
      namespace: this.client.options.namespace,
      taskQueue: { name: taskQueue, kind: TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
      taskQueueType:
        kind === 'activity' ? TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY : TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
    });
    return (response.pollers ?? []).map((poller) => msOf(poller.lastAccessTime)).filter((ms) => ms > 0);
  }
}
