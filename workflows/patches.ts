/**
 * Every patch of the goal workflow (Temporal's `patched()`), with the release that added it and
 * where it is in Temporal's procedure: `patched` → `deprecated` (one release later, or once
 * `goalrun upgrade-check` shows no goal of an older build) → `removed`. A goal started by an older
 * build replays the old branch of each patch; one started by this build records the marker and
 * takes the new branch.
 *
 * Rules (test/workflow/patches.test.ts holds them against the ids each release shipped, saved
 * beside its histories in test/fixtures/histories/<version>/patches.json):
 * - an id is never deleted from this list; a removed patch keeps its record;
 * - a patch is removed only after a release that shipped it as deprecated;
 * - new patches go at the end: they are asked in this order when an execution starts.
 *
 * Plain data, free of the SDK, so tests and the CLI can read it.
 */

/**
 * Every named release, oldest first; the last is this build's version (package.json). `goalrun
 * upgrade-check` counts how many releases old a goal's build is along this list.
 */
export const RELEASES: readonly string[] = ['0.1.0', '0.2.0', '0.3.0'];

/** Where a patch is in Temporal's procedure. */
export type PatchStage = 'patched' | 'deprecated' | 'removed';

/** The patch ids of this build. Durable contracts: never rename one. */
export const PATCH = {
  /** Compaction keeps every steering message verbatim (within a budget), not only the latest three. */
  keepEverySteering: 'keep-every-steering-message',
  /**
   * Every message goes through one queue the main loop drains (handlers validate and enqueue, never
   * await an activity); a pause stops a running model call; changes made during a compaction are
   * merged, not overwritten; a time limit that fired stays fired when /limits re-arms it; handlers
   * finish before the run ends.
   */
  commandQueue: 'command-queue',
  /**
   * The tool host gathers each execution's workspace context (environment snapshot, project
   * instructions, MCP tools, hooks) in an activity on the goal's tool queue before the first step.
   */
  workspaceContext: 'tool-host-workspace-context',
  /** The stop hooks run when the model calls finish, notify hooks on status changes, MCP servers stop at the end. */
  goalHooks: 'stop-and-notify-hooks',
  /** Every model call also reserves against the store-wide daily budget, and waits at it. */
  dailyBudget: 'daily-budget',
  /** At the end of every step, a snapshot of a git workspace under refs/goalrun/<session>/<step> (for fork). */
  workspaceSnapshots: 'workspace-snapshots',
  /**
   * The repository a goal starts in is kept in its state (state.snapshots), and only it is ever
   * snapshotted; snapshots stop at the goal's size cap; a refused or stopped snapshot writes a notice.
   */
  snapshotGuard: 'workspace-snapshot-guard',
  /**
   * Paid calls without a used answer count (issue 24 item 4): a model step or summary that ended in
   * failure is followed by a billedAttempts local activity, and a summarizer call holds its worst case
   * against the daily budget first.
   */
  paidCalls: 'paid-calls',
  /**
   * A goal that ends blocked or failed fails its workflow (issue 26 item 1), so the Web UI's header says
   * Failed rather than a green Completed: a non-retryable GoalBlocked or GoalFailed with the final
   * snapshot in its details and the reason as its message.
   */
  goalEndFailure: 'goal-end-failure',
  /**
   * The runaway breaker warns before it pauses (issue 26.2, 24.6): a notice at the repeat limit, a
   * pause three repeats later; cycles, workflow tools and calls that waited count; an unpause, a
   * steering message or a resume starts the counts afresh, and steering unpauses a breaker pause.
   */
  breakerWarnsFirst: 'breaker-warns-first',
  /**
   * Waits that end (issue 24 items 5 and 6): the daily-budget wait prices the call again at every
   * poll, refuses at once a call that can never fit, ends after budget_wait_minutes and hands over at
   * continue-as-new; a quota wait longer than quota_wait_minutes ends the goal as blocked.
   */
  waitsEnd: 'waits-that-end',
  /**
   * The workflow's stall watch (issue 24 item 6): a timer marks a running goal `stalled` when no step
   * finished for stalled_after_minutes, with a checkpoint (the notify hooks hear of it); the next
   * finished step sets it running again.
   */
  stallWatch: 'stall-watch',
  /**
   * A store outage is a wait, never a failure (issue 24 item 5): a store call that gave up on an outage
   * is made again until the store is back, the goal showing waiting_store meanwhile.
   */
  storeOutageWait: 'store-outage-wait',
  /**
   * Notifications (issue 28 §2): a goal started with config `notify` targets starts a notification
   * child workflow, not waited for, on each status that needs a person and at its end.
   */
  notifyTargets: 'notify-targets',
  /**
   * Failover to the backup model (issue 27 §3): a step gives up on the primary after retryable provider
   * failures in a row (or an outage of some minutes), the goal moves to the backup and probes the
   * primary after a cooldown; a /model makes the new model the primary.
   */
  failover: 'failover-to-backup',
  /**
   * Fast takeover (issue 26 item 6): a call on a foreground host's queue counts the host as gone when
   * nobody takes it within 5 s, or when its heartbeats stop for 5 s (not retried by Temporal; asked once
   * more on the host with a 2 s start window), and is made again on the shared queue.
   */
  fastTakeover: 'fast-takeover',
  /**
   * Verified completion (issue 27 §1): a finish complete of a goal with checks runs them on the tool
   * host first; a failed check keeps the goal going, and ends it blocked after the failed-finish limit.
   */
  verifiedCompletion: 'verified-completion',
  /**
   * Sub-agents (issue 27 §2): the model is offered the `agent` tool, whose calls start the goal
   * workflow as a child workflow with a share of the goal's budget; a sub-agent at its share gets one
   * tools-off turn and ends budget_exhausted; its todo-write claims go to its parent by signal.
   */
  subAgents: 'sub-agents',
  /**
   * Traces only when asked (issue 30): a run started without a trace context (no `_tracer-data`
   * header: its starter had no OTLP endpoint) skips Temporal's OpenTelemetry workflow interceptors,
   * which built a tracer, a context store and spans for every goal that nothing exported.
   */
  tracedWhenAsked: 'traced-when-asked',
  /**
   * Start attributes count as published (issue 30): the search attributes a goal's start set
   * (GoalStatus running, GoalIteration 1: START_ITERATION) are not upserted again, so a new goal writes
   * no upsert at its start.
   */
  startAttributesPublished: 'start-attributes-published',
  /**
   * A close only for what is left (issue 30): the goal's end calls killSessionJobs on its tool host
   * only when the host said, at the gathering or after a tool call, that it holds something of the
   * session (a private /tmp, a job, a server), or when another call on the host may have left one.
   */
  closeOnlyWhatIsLeft: 'close-only-what-is-left',
  /**
   * A new goal opens in one local activity (issue 25 item 5, issue 30): openSession also resolves the
   * model budget and reads the store's daily cap, where resolveModelBudget and a first reserveDailyBudget
   * (which found no cap) were two more local activities, each an activation of the workflow.
   */
  openInOneCall: 'open-in-one-call',
  /**
   * The answer of a `finish` that ends the goal is written with the goal-ended checkpoint, in one
   * local activity (issue 30): it was an appendMessage of its own just before the end's saveState,
   * each an activation of the workflow and a marker. A path that answers pending calls instead (a
   * cut, a failure, a cancel) writes it first, as it was.
   */
  finishAnsweredAtEnd: 'finish-answered-at-end',
  /**
   * The workspace context is gathered by a local activity when the goal's tools run on the workflow's
   * own queue (no tools queue, no foreground host), in the workflow task that opens the session:
   * an activity and a workflow task fewer per execution (issue 30), the same gathering.
   */
  gatherInWorkflowTask: 'gather-in-workflow-task',
  /**
   * The main loop wakes on an activity's own promise while it serves the inbox (command-queue.ts), not on
   * a condition: one call into the workflow's context fewer for each activity a goal runs (issue 25 item 5).
   */
  serveByPromise: 'serve-by-promise',
} as const;

/** A patch id. */
export type PatchId = (typeof PATCH)[keyof typeof PATCH];

/** One patch and its history. */
export interface PatchRecord {
  id: PatchId | string;
  /** The release that added it (`pre-release` for changes before releases were named). */
  addedIn: string;
  stage: PatchStage;
  /** The release that turned `patched()` into `deprecatePatch()`. */
  deprecatedIn?: string;
  /** The release that dropped the call. */
  removedIn?: string;
  /** What the new branch does. */
  what: string;
}

/** Every patch, oldest first: the order in which an execution asks for them. */
export const PATCHES: readonly PatchRecord[] = [
  {
    id: 'context-compaction',
    addedIn: 'pre-release',
    stage: 'removed',
    removedIn: 'pre-release',
    what:
      'context compaction. Removed without the deprecation step before releases were named, so goals started by ' +
      'builds from before 2026-12-01 cannot finish on this one (run a worker of their build, or reset them).',
  },
  {
    id: PATCH.keepEverySteering,
    addedIn: '0.1.0',
    stage: 'patched',
    what: 'compaction keeps every steering message verbatim (a quarter of the usable input at most)',
  },
  {
    id: PATCH.commandQueue,
    addedIn: '0.2.0',
    stage: 'patched',
    what: 'one command queue for every message, drained by the main loop; pause stops a running model call',
  },
  {
    id: PATCH.workspaceContext,
    addedIn: '0.2.0',
    stage: 'patched',
    what:
      'a gatherWorkspaceContext activity on the tool queue at the start and after a resume: the environment ' +
      'snapshot is taken there (not by openSession), and the project instructions and MCP tools reach the model',
  },
  {
    id: PATCH.goalHooks,
    addedIn: '0.2.0',
    stage: 'patched',
    what:
      'runStopHooks when the model calls finish, runNotifyHooks when the status changes, and the MCP servers ' +
      'stopped (killSessionJobs on the tool queue) when the goal ends; only for goals that have such hooks or servers',
  },
  {
    id: PATCH.dailyBudget,
    addedIn: '0.2.0',
    stage: 'patched',
    what:
      'a reserveDailyBudget local activity before each model call (the store-wide daily budget) and a ' +
      'settleDailyBudget after it; at the daily cap the goal waits in budget_reached, re-checking every minute',
  },
  {
    id: PATCH.workspaceSnapshots,
    addedIn: '0.2.0',
    stage: 'patched',
    what:
      'a snapshotWorkspace activity on the tool queue at the end of every step: a git workspace is recorded as a ' +
      'commit under refs/goalrun/<session>/<step> (what goalrun fork checks out); a failed snapshot is a note',
  },
  {
    id: PATCH.snapshotGuard,
    addedIn: '0.3.0',
    stage: 'patched',
    what:
      'a workspaceRepository activity on the tool queue when an execution starts with no state.snapshots (a new ' +
      'goal): the repository the workspace is in is kept in state.snapshots, later snapshots of another ' +
      'repository are refused, and snapshots stop at the goal snapshot_max_total_mib; a refusal or that stop ' +
      'writes a notice (appendMessage)',
  },
  {
    id: PATCH.paidCalls,
    addedIn: '0.3.0',
    stage: 'patched',
    what:
      'a billedAttempts local activity after a model step or a summarizer call that failed or was stopped (what ' +
      'its attempts were billed), and a reserveDailyBudget / settleDailyBudget pair around each summarizer call',
  },
  {
    id: PATCH.goalEndFailure,
    addedIn: '0.3.0',
    stage: 'patched',
    what:
      'a goal that ends blocked or failed fails its workflow with a non-retryable GoalBlocked or GoalFailed ' +
      'ApplicationFailure (message: the reason; details: the final snapshot) instead of completing it',
  },
  {
    id: PATCH.breakerWarnsFirst,
    addedIn: '0.3.0',
    stage: 'patched',
    what:
      'the runaway breaker writes a notice (appendMessage) at the repeat limit and pauses only 3 repeats later; ' +
      'short cycles, workflow tools (a finish vetoed the same way) and calls that waited (a higher limit) count; ' +
      'unpause, steering and resume start the counts afresh; steering unpauses a goal the breaker paused',
  },
  {
    id: PATCH.waitsEnd,
    addedIn: '0.3.0',
    stage: 'patched',
    what:
      'at the daily cap: a call whose worst case alone is over the cap ends the goal as blocked at once, each poll ' +
      'reserves the call priced again, the wait ends the goal as budget_reached after budget_wait_minutes and ' +
      'continues as new when Temporal suggests it (the wait goes on in the next run); a quota wait longer than ' +
      'quota_wait_minutes ends the goal as blocked instead of starting its timer',
  },
  {
    id: PATCH.stallWatch,
    addedIn: '0.3.0',
    stage: 'patched',
    what:
      'a timer beside the main loop (one per quiet period) that marks a running goal stalled, with a saveState ' +
      'checkpoint, when no step finished for stalled_after_minutes; a checkpoint sets it running after the next step',
  },
  {
    id: PATCH.storeOutageWait,
    addedIn: '0.3.0',
    stage: 'patched',
    what:
      'a store call (local activity) that gave up on a store outage (StoreUnavailable or a timeout) is scheduled ' +
      'again until it gets through; a goal still going shows waiting_store meanwhile (a search attribute upsert ' +
      'when it starts and when it ends), an ended goal keeps its status',
  },
  {
    id: PATCH.notifyTargets,
    addedIn: '0.3.0',
    stage: 'patched',
    what:
      'a goal whose start saw config notify targets starts a goalNotificationWorkflow child (ABANDON, not ' +
      'waited for) when it enters a status that needs a person, stalls (at most hourly) or ends',
  },
  {
    id: PATCH.failover,
    addedIn: '0.3.0',
    stage: 'patched',
    what:
      'a goal with a backup model passes the failover rule to its model steps; a step that ends with ProviderOutage ' +
      'moves the goal to the backup (state.failover, a failover event, the budget resolved anew) and runs again; ' +
      'after the cooldown a step probes the primary and one success keeps it; /model clears the failover state',
  },
  {
    id: PATCH.fastTakeover,
    addedIn: '0.3.0',
    stage: 'patched',
    what:
      'a call placed on the foreground host (model step, tool, summarizer) has a 5 s schedule-to-start timeout ' +
      '(was 30 s) and a 5 s heartbeat timeout that Temporal does not retry (TemporalTimeout:Heartbeat); after ' +
      'one, the call is scheduled once more on the host with a 2 s schedule-to-start timeout; a schedule-to-start ' +
      'timeout releases the host and the call is made again on the shared queue',
  },
  {
    id: PATCH.verifiedCompletion,
    addedIn: '0.3.0',
    stage: 'patched',
    what:
      'a runVerifyChecks activity on the tool queue when the model calls finish complete and the goal has checks ' +
      '(--verify, config verify): a failed check turns the call into an error result and the goal goes on, ' +
      'ending blocked after verify_max_failures failed finishes',
  },
  {
    id: PATCH.subAgents,
    addedIn: '0.3.0',
    stage: 'patched',
    what:
      'the agent tool is offered (modelStep input); an agent call starts goalWorkflow as a child workflow ' +
      '(parent close policy REQUEST_CANCEL) and waits for it; a sub-agent at its share of the budget makes one ' +
      'model step without tools and ends budget_exhausted; its todo-write calls signal its parent (agentTasks)',
  },
  {
    id: PATCH.tracedWhenAsked,
    addedIn: '0.3.0',
    stage: 'patched',
    what:
      'a run whose start carries no trace context runs without the OpenTelemetry workflow interceptors ' +
      '(workflows/tracing-interceptors.ts): no RunWorkflow or StartActivity spans, and activities start no trace of the workflow',
  },
  {
    id: PATCH.startAttributesPublished,
    addedIn: '0.3.0',
    stage: 'patched',
    what:
      'the first publish upserts the search attributes only when they differ from what the start set: a goal ' +
      'started running at GoalIteration 1 (as goals are started now) writes no upsert at its start',
  },
  {
    id: PATCH.closeOnlyWhatIsLeft,
    addedIn: '0.3.0',
    stage: 'patched',
    what:
      'no killSessionJobs activity at the end of a goal whose tool host reported, at the gathering and after ' +
      'each tool call, that it holds nothing of the session, and that made no other call there (hooks, checks, ' +
      'snapshots, worktrees), had no background job and no MCP server',
  },
  {
    id: PATCH.openInOneCall,
    addedIn: '0.3.0',
    stage: 'patched',
    what:
      "a new goal's openSession local activity also resolves the model budget and reads the daily cap: no " +
      'resolveModelBudget local activity at the first step, and none to reserveDailyBudget while the store has no daily cap',
  },
  {
    id: PATCH.finishAnsweredAtEnd,
    addedIn: '0.3.0',
    stage: 'patched',
    what:
      "the answer of a `finish` that ends the goal is stored by the end's local activity (appendMessage with the " +
      'goal-ended checkpoint), not by an appendMessage of its own before a saveState',
  },
  {
    id: PATCH.gatherInWorkflowTask,
    addedIn: '0.3.0',
    stage: 'patched',
    what:
      'a goal whose tools run on the workflow queue (no tools queue, no foreground host) gathers its workspace ' +
      'context with a gatherWorkspaceContext local activity in the workflow task that opens it, not an activity ' +
      'and a workflow task of their own',
  },
  {
    id: PATCH.serveByPromise,
    addedIn: '0.3.0',
    stage: 'patched',
    what:
      "while an activity runs, the main loop waits on the activity's promise raced with a condition on the inbox, so " +
      'it goes on in the activation that delivers the result rather than in the next pass over blocked conditions',
  },
];

/** Whether a patch's new behaviour applies to a run: one boolean per id this build knows. */
export type WorkflowFeatures = Record<PatchId, boolean>;
