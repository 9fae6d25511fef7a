/**
 * What the CLI reads from Temporal about a goal, whatever the transport: Temporal's HTTP API with
 * Node's fetch (temporal-http.ts, no SDK loaded) or the gRPC client (temporal-grpc.ts). The status
 * logic (goal-status.ts, worker-presence.ts) is written once against this interface.
 */
import type { Client } from '@temporalio/client';
import type { QueryName } from '../core/workflow-names';

/** An activity Temporal has scheduled for a workflow and not yet seen finish. */
export interface PendingActivity {
  activityType: string;
  /** The attempt now running or waiting (1 for the first). */
  attempt: number;
  /** The message of the last attempt's failure, or null when none failed. */
  lastFailure: string | null;
  /** `scheduled` (waiting for a worker to take it), `started` (a worker runs it), or `cancel_requested`. */
  state?: 'scheduled' | 'started' | 'cancel_requested';
  /** When the running attempt last heartbeated, else when it started (ms since the epoch), or null. */
  lastAliveMs?: number | null;
}

/** What Temporal says about a workflow's current run. */
export interface WorkflowSummary {
  /** RUNNING, COMPLETED, FAILED, CANCELLED, TERMINATED, TIMED_OUT, CONTINUED_AS_NEW, … (the SDK's names). */
  status: string;
  taskQueue: string;
  pendingActivities: PendingActivity[];
  /** The Worker Deployment build the run is on (versioned workers only), else absent. */
  build?: string;
  /** The attempt of the workflow task Temporal waits on (more than 1: the last one failed), or 0. */
  workflowTaskAttempt?: number;
}

/** The first page of a run's history, as much as the CLI needs of it. */
export interface HistoryStart {
  /** Events on the page. */
  eventCount: number;
  /** A worker completed a workflow task on this page. */
  workflowTaskCompleted: boolean;
  /** When the run started, to the second (as the gRPC client reads it), or null. */
  startedAt: Date | null;
  taskQueue: string | null;
  /** The run's first argument, decoded; null when absent or not decodable. */
  input: unknown;
  /**
   * Why the last workflow task on the page failed, when none completed after it (e.g. a worker that
   * cannot decrypt the goal's input); null otherwise.
   */
  workflowTaskFailure: string | null;
}

/** A workflow as a list of executions shows it. */
export interface ListedWorkflow {
  workflowId: string;
  startedAt: Date;
  taskQueue: string;
}

/** Which tasks of a queue a poller asks for. */
export type PollerKind = 'workflow' | 'activity';

/** Read-only calls on Temporal, in the namespace the reader was made for. */
export interface TemporalReader {
  readonly transport: 'http' | 'grpc';
  /** DescribeWorkflowExecution of the current run; null when Temporal does not know the workflow. */
  describe(workflowId: string): Promise<WorkflowSummary | null>;
  /** QueryWorkflow without arguments; rejects when no worker answers or the query fails. */
  query<Result>(workflowId: string, query: QueryName<Result>): Promise<Result>;
  /** The first `pageSize` events of the current run; rejects when the workflow does not exist. */
  historyStart(workflowId: string, pageSize: number): Promise<HistoryStart>;
  /** ListWorkflowExecutions for a visibility query, at most `limit` of them. */
  listWorkflows(query: string, limit: number): Promise<ListedWorkflow[]>;
  /**
   * Why the run's last workflow task failed, when no task completed after it (read from the end of
   * the history), or null.
   */
  lastWorkflowTaskFailure(workflowId: string): Promise<string | null>;
  /** When each poller of the task queue last polled (ms since the epoch). */
  pollerAccessTimes(taskQueue: string, kind: PollerKind): Promise<number[]>;
}

/** A reader, or the gRPC client that commands which steer or follow a goal already hold. */
export type TemporalSource = TemporalReader | Client;

const grpcReaders = new WeakMap<Client, TemporalReader>();

/** The reader of a source: itself, or the gRPC reader of a client (loaded only then). */
export function readerOf(source: TemporalSource): TemporalReader {
  if ('transport' in source) return source;
  let reader = grpcReaders.get(source);
  if (!reader) {
    const { GrpcTemporalReader } = require('./temporal-grpc') as typeof import('./temporal-grpc');
    reader = new GrpcTemporalReader(source);
    grpcReaders.set(source, reader);
  }
  return reader;
}
