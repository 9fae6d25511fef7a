/**
 * The histories of every run of a goal (a goal continues as new into several runs), and the workflow
 * task failures they hold: what the upgrade test checks and what `--record` saves.
 */
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { PATCH_MARKER_NAME, patchIdOfMarker } from '../../core/patch-procedure';

type History = temporal.api.history.v1.History;
const { EventType, WorkflowTaskFailedCause } = temporal.api.enums.v1;

/** Each run's history, first run first, following continue-as-new from `firstRunId`. */
export async function historiesOfGoal(
  client: Client,
  workflowId: string,
  firstRunId: string,
): Promise<History[]> {
  const histories: History[] = [];
  let runId: string | undefined = firstRunId;
  while (runId) {
    const history: History = temporal.api.history.v1.History.create(
      await client.workflow.getHandle(workflowId, runId).fetchHistory(),
    );
    histories.push(history);
    const last = history.events.at(-1);
    runId = last?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
  }
  return histories;
}

/** One failed workflow task, as a line for an assertion message. */
export interface TaskFailure {
  run: number;
  eventId: string;
  cause: string;
  message: string;
}

/**
 * Every workflow task failure in the histories. A failure with cause UNHANDLED_COMMAND is left out:
 * the server refuses a completion because a message arrived meanwhile, and the task simply runs again.
 */
export function workflowTaskFailures(histories: History[]): TaskFailure[] {
  const failures: TaskFailure[] = [];
  histories.forEach((history, run) => {
    for (const event of history.events) {
      if (event.eventType !== EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED) continue;
      const attributes = event.workflowTaskFailedEventAttributes;
      const cause = attributes?.cause ?? 0;
      if (cause === WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_UNHANDLED_COMMAND) continue;
      failures.push({
        run: run + 1,
        eventId: String(event.eventId),
        cause: WorkflowTaskFailedCause[cause] ?? String(cause),
        message: attributes?.failure?.message ?? '',
      });
    }
  });
  return failures;
}

/** The patch ids a run's history recorded (its `core_patch` markers). */
export function patchMarkers(history: History): string[] {
  const ids: string[] = [];
  for (const event of history.events) {
    const marker = event.markerRecordedEventAttributes;
    if (marker?.markerName !== PATCH_MARKER_NAME) continue;
    const id = patchIdOfMarker(marker.details);
    if (id) ids.push(id);
  }
  return ids;
}
