/** The kinds of rows in a session's event log (the store's `events.kind`), in one place. */

/** Event kinds the workflow and activities write (the store's `events.kind`). */
export const EVENT_KINDS = {
  sessionOpened: 'session-opened',
  sessionResumed: 'session-resumed',
  stepStart: 'step-start',
  modelUsage: 'model-usage',
  tool: 'tool',
  taskUpdate: 'task-update',
  compaction: 'compaction',
  notice: 'notice',
  steering: 'steering',
  approvalRequested: 'approval-requested',
  approval: 'approval',
  goalEnded: 'goal-ended',
  /** A goal reached its money or token cap, or a raise let it go on (issue 18). */
  budget: 'budget',
  /** The goal moved to its backup model, probed its primary, or went back to it (issue 27 §3). */
  failover: 'failover',
  /** The goal's checks ran at a finish complete (issue 27 §1): each with its exit code and spool reference. */
  verify: 'verify',
  /** A sub-agent started, or ended with its status and cost (issue 27 §2). */
  agent: 'agent',
} as const;
