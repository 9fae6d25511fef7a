/** What a goalrun worker process does, and the queue a tool host polls (kept light: the CLI's help reads it). */
import os from 'node:os';

/** What a worker process does. */
export const WORKER_ROLES = ['all', 'model', 'tools'] as const;

/** One of WORKER_ROLES. */
export type WorkerRole = (typeof WORKER_ROLES)[number];

/** The task queue of a tool host: its host name and the workspace root it serves. */
export function toolsQueueName(workspaceRoot: string, host = os.hostname()): string {
  const slug = workspaceRoot.replace(/[^A-Za-z0-9]+/g, '-').replace(/^-|-$/g, '') || 'root';
  return `goalrun-tools@${host}:${slug}`;
}
