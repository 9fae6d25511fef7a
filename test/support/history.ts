/** Measures a workflow's history the way Temporal stores it: encoded protobuf bytes. */
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** Every event of a workflow's current run, with its encoded size. */
export async function fetchHistory(
  address: string,
  workflowId: string,
  runId?: string,
): Promise<Array<{ event: HistoryEvent; bytes: number }>> {
  const connection = await Connection.connect({ address });
  try {
    const client = new Client({ connection });
    const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
    return (history.events ?? []).map((event) => ({
      event,
      bytes: temporal.api.history.v1.HistoryEvent.encode(event).finish().length,
    }));
  } finally {
    await connection.close();
  }
}

/** Each local activity's marker in order: its type and its decoded result. */
export function localActivities(
  events: HistoryEvent[],
): Array<{ type: string; result: unknown; eventId: number }> {
  return events.flatMap((event) => {
    const marker = event.markerRecordedEventAttributes;
    if (marker?.markerName !== 'core_local_activity') return [];
    const decode = (key: string) => {
      const data = marker.details?.[key]?.payloads?.[0]?.data;
      // A local activity that returns nothing (saveState) has an empty payload.
      return data?.length ? JSON.parse(Buffer.from(data).toString('utf8')) : undefined;
    };
    return [{ type: decode('data').activity_type, result: decode('result'), eventId: Number(event.eventId) }];
  });
}

/** Every string of a value, with byte arrays (Temporal payloads) decoded as UTF-8: what a secret could hide in. */
export function allText(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') out.push(value);
  else if (value instanceof Uint8Array) out.push(Buffer.from(value).toString('utf8'));
  else if (value && typeof value === 'object') for (const child of Object.values(value)) allText(child, out);
  return out;
}

/** The sizes of every payload anywhere in an event (inputs, results, memo, details). */
export function payloadSizes(value: unknown, sizes: number[] = []): number[] {
  if (value === null || typeof value !== 'object') return sizes;
  if (value instanceof Uint8Array) return sizes;
  const record = value as Record<string, unknown>;
  if (record.data instanceof Uint8Array && 'metadata' in record) {
    sizes.push(record.data.length);
    return sizes;
  }
  for (const child of Object.values(record)) payloadSizes(child, sizes);
  return sizes;
}

/** The activity summary of an ActivityTaskScheduled event, if any (decoded JSON string). */
export function activitySummary(event: HistoryEvent): string | undefined {
  const summary = event.userMetadata?.summary;
  if (!summary?.data) return undefined;
  try {
    return JSON.parse(Buffer.from(summary.data).toString('utf8'));
  } catch {
    return undefined;
  }
}
