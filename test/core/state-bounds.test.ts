/**
 * Issue 15 §3: the control state is bounded, so the input of continue-as-new stays under Temporal's
 * payload warning (512 KiB) in the worst case the caps allow. The state is built with every capped
 * part at its cap, in three-byte characters (the worst UTF-8 case for text that needs no escaping),
 * and the ledger with its compaction plan at the budget the ledger's folding holds
 * (CONTROL_STATE_BUDGET_BYTES, see ledger-fold.property.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { initialCompactionState } from '../../core/compaction/state';
import { jsonBytes } from '../../core/compaction/state-size';
import { CONTROL_STATE_BUDGET_BYTES } from '../../core/compaction/thresholds';
import { addToBreakdown } from '../../core/cost';
import { type GoalState, initialGoalState, noteAction } from '../../core/goal';
import { type InboxRequest, MAX_INBOX_BYTES, MAX_INBOX_REQUESTS } from '../../core/goal-inbox';
import { GoalSession, STEERING_IDS_KEPT } from '../../core/goal-session';
import { JOBS_KEPT } from '../../core/jobs-registry';
import type { LedgerEntry } from '../../core/ledger';
import {
  FINISH_SUMMARY_MAX_CHARS,
  MAX_MODELS_IN_BREAKDOWN,
  MAX_OBJECTIVE_CHARS,
  RECENT_ACTIONS_KEPT,
} from '../../core/limits';
import { GENERIC_CARD } from '../../core/model-card';
import { CONTINUE_AS_NEW_INPUT_BUDGET_BYTES, continueAsNewPayload } from '../../core/state-bounds';
import { MAX_TASK_GRAPH_BYTES } from '../../core/task-graph';
import type { Task } from '../../core/task-graph-types';
import { handleWorkflowTool } from '../../core/workflow-tools';

/** Three UTF-8 bytes per character, nothing JSON must escape. */
const wide = (chars: number) => '界'.repeat(chars);

function worstCaseState(): GoalState {
  const state = initialGoalState({
    sessionId: `${'a'.repeat(16)}-20261202T023000123Z`,
    objective: wide(MAX_OBJECTIVE_CHARS),
    workspace: `/${'w'.repeat(4_000)}`,
    model: `openai-compatible:${'m'.repeat(180)}`,
    baseUrl: `http://${'h'.repeat(2_000)}/v1`,
    limits: { maxIterations: 50, maxSteps: 500, maxMinutes: 240, noProgressLimit: 3 },
    toolTaskQueue: 'q'.repeat(1_000),
    name: wide(120),
    sandbox: {
      mode: 'workspace-write',
      network: false,
      writableRoots: Array.from({ length: 16 }, (_, n) => `/${'r'.repeat(250)}${n}`),
      env: Array.from({ length: 32 }, (_, n) => `VAR_${n}`),
      approval: 'on-request',
      approvalTimeoutMinutes: 30,
    },
  });
  const session = new GoalSession(state, () => 0);

  // The ledger and its plan, at the budget that folding holds.
  const ledger: LedgerEntry[] = [];
  const compaction = initialCompactionState(1);
  // Counted as it grows (measuring the whole each time would be quadratic), then checked whole.
  let bytes = jsonBytes({ ledger, compaction });
  for (let seq = 1_000_000; bytes < CONTROL_STATE_BUDGET_BYTES - 100; seq++) {
    const entry: LedgerEntry = { seq, role: 'user', tokens: 123_456, kind: 'steering' };
    ledger.push(entry);
    compaction.plan.keptSeqs.push(seq);
    bytes += jsonBytes(entry) + 1 + String(seq).length + 1;
  }
  expect(jsonBytes({ ledger, compaction })).toBeGreaterThan(CONTROL_STATE_BUDGET_BYTES - 200);
  session.state = { ...session.state, ledger, compaction };

  // The task list at its cap: as many long tasks as a todo-write call is allowed to leave.
  const tasks: Task[] = [];
  for (let n = 1; ; n++) {
    const next: Task[] = [
      ...tasks,
      { id: `task-${n}`, content: wide(1_000), status: 'pending', dependencies: [] },
    ];
    if (jsonBytes(next) > MAX_TASK_GRAPH_BYTES) break;
    tasks.push(next.at(-1)!);
  }
  session.state = { ...session.state, tasks };

  // The inbox at its cap.
  const inbox: InboxRequest[] = [];
  for (let n = 0; n < MAX_INBOX_REQUESTS; n++) {
    const next: InboxRequest = {
      kind: 'steer',
      id: `id-${n}`.padEnd(100, 'x'),
      text: wide(1_000),
      from: wide(100),
    };
    if (jsonBytes([...inbox, next]) > MAX_INBOX_BYTES) break;
    inbox.push(next);
  }
  session.state = { ...session.state, inbox };

  // Everything else at its cap.
  for (let n = 0; n < RECENT_ACTIONS_KEPT + 5; n++) session.note(wide(5_000));
  for (let n = 0; n < STEERING_IDS_KEPT + 5; n++) session.steeringDelivered(`steer-${n}`.padEnd(100, 's'));
  for (let n = 0; n < JOBS_KEPT + 5; n++) {
    session.jobStarted({
      jobId: `job-${n}`,
      command: wide(5_000),
      processQueue: `goalrun-${'p'.repeat(100)}`,
    });
  }
  session.requestApproval({ toolCallId: 'call-1', command: wide(4_000), justification: wide(2_000) }, 30);
  let breakdown = {};
  for (let n = 0; n < MAX_MODELS_IN_BREAKDOWN * 3; n++) {
    breakdown = addToBreakdown(
      breakdown,
      `openai-compatible:${'m'.repeat(150)}-${n}`,
      { inputTokens: 1e9, outputTokens: 1e9, cacheReadTokens: 1e9, cacheWriteTokens: 1e9 },
      { summarizer: n % 2 === 0, card: GENERIC_CARD },
    );
  }
  session.state = { ...session.state, breakdown };
  const finished = handleWorkflowTool(session.state, { toolCallId: 'finish-1', toolName: 'finish' }, {
    tool: 'finish',
    parsed: { ok: true, args: { status: 'blocked', summary: wide(50_000) } },
  } as never);
  session.state = finished.state;
  session.setStatus('blocked', wide(50_000));
  session.state = noteAction(session.state, wide(5_000));
  return session.savedState();
}

describe('the control state carried over continue-as-new', () => {
  it('stays under 512 KiB in the worst case the caps allow', () => {
    const state = worstCaseState();
    const bytes = jsonBytes(continueAsNewPayload(state));
    const parts = Object.fromEntries(Object.entries(state).map(([key, value]) => [key, jsonBytes(value)]));
    console.log(
      `largest continue-as-new input the caps allow: ${bytes} bytes (${(bytes / 1024).toFixed(1)} KiB)`,
      parts,
    );
    expect(state.finishSummary!.length).toBeLessThanOrEqual(FINISH_SUMMARY_MAX_CHARS);
    expect(Object.keys(state.breakdown ?? {})).toHaveLength(MAX_MODELS_IN_BREAKDOWN);
    expect(state.recent).toHaveLength(RECENT_ACTIONS_KEPT);
    expect(bytes).toBeLessThan(CONTINUE_AS_NEW_INPUT_BUDGET_BYTES);
  });

  it('carries the objective once', () => {
    const state = initialGoalState({
      sessionId: 's',
      objective: 'the one objective',
      workspace: '/w',
      model: 'scripted:x',
      limits: { maxIterations: 1, maxSteps: 1, maxMinutes: 1, noProgressLimit: 1 },
    });
    const payload = JSON.stringify(continueAsNewPayload(state));
    expect(payload.split('the one objective')).toHaveLength(2);
  });
});
