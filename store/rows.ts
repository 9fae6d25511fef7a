/** How rows of the session store's tables map to the store's types, and how jsonb parameters are written. */
import type { MessageMeta, StoredMessage, TranscriptEntry } from '../core/messages';
import { storableJson } from '../core/text';
import type { EventRow, GoalStatus, SessionRow } from './types';

export const SESSION_COLUMNS =
  'id, project_dir, project_hash, objective, status, reason, model, workflow_id, goal_state, name, created_at, updated_at, cleaned_at';

export interface SessionRecord {
  id: string;
  project_dir: string;
  project_hash: string;
  objective: string;
  status: GoalStatus;
  reason: string | null;
  model: string;
  workflow_id: string;
  goal_state: unknown;
  name: string | null;
  created_at: Date;
  updated_at: Date;
  cleaned_at?: Date | null;
}

export interface MessageRecord {
  // bigint columns come back as strings from pg.
  seq: string | number;
  key: string;
  role: StoredMessage['role'];
  content: StoredMessage['content'];
  meta: MessageMeta | null;
}

export interface EventRecord {
  id: string | number;
  session_id: string;
  kind: string;
  data: unknown;
  created_at: Date;
}

export interface CheckpointRecord {
  id: string | number;
  session_id: string;
  goal_state: unknown;
  tasks: unknown;
  created_at: Date;
}

/**
 * JSON text for a jsonb parameter. Serialized here, not by the driver, because pg turns a JS array
 * into a PostgreSQL array literal. undefined and null become SQL NULL, which reads back as null.
 * Strings that jsonb refuses (a lone surrogate, NUL) are stored as U+FFFD (core/text storableJson).
 */
export function toJson(value: unknown): string | null {
  return value === undefined || value === null ? null : storableJson(value);
}

/** JSON text for a jsonb parameter that is never NULL (`{}` or `[]` values, message content). */
export function jsonText(value: unknown): string {
  return storableJson(value);
}

export function toEvent(row: EventRecord): EventRow {
  return {
    id: Number(row.id),
    sessionId: row.session_id,
    kind: row.kind,
    data: row.data,
    createdAt: row.created_at,
  };
}

export function toSession(row: SessionRecord): SessionRow {
  return {
    id: row.id,
    projectDir: row.project_dir,
    projectHash: row.project_hash,
    objective: row.objective,
    status: row.status,
    reason: row.reason,
    model: row.model,
    workflowId: row.workflow_id,
    goalState: row.goal_state ?? null,
    name: row.name ?? null,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    cleanedAt: row.cleaned_at ?? null,
  };
}

export function toEntry(row: MessageRecord): TranscriptEntry {
  return {
    seq: Number(row.seq),
    key: row.key,
    message: { role: row.role, content: row.content } as StoredMessage,
    ...(row.meta ? { meta: row.meta } : {}),
  };
}
