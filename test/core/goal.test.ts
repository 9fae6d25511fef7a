import { describe, expect, it } from 'vitest';
import {
  DEFAULT_LIMITS,
  FINAL_STATUSES,
  type GoalDefinition,
  type GoalLimits,
  type GoalState,
  initialGoalState,
  noteAction,
} from '../../core/goal';
import { detailsMarkdown } from '../../core/goal-details';
import { continuationMessage, keptProgressSummary, resumeMessage } from '../../core/goal-messages';
import { checkStopRules, endIteration, recordToolOutcome } from '../../core/goal-rules';
import { snapshotOf } from '../../core/goal-snapshot';
import {
  DEFAULT_MAX_ITERATIONS,
  DEFAULT_MAX_MINUTES,
  DEFAULT_MAX_STEPS,
  DEFAULT_NO_PROGRESS_LIMIT,
  RECENT_ACTIONS_KEPT,
} from '../../core/limits';
import { EMPTY_USAGE } from '../../core/usage';

const OBJECTIVE = 'make the failing test in src/parser.ts pass';

function goal(limits: Partial<GoalLimits> = {}): GoalDefinition {
  return {
    sessionId: 'sess-1',
    objective: OBJECTIVE,
    workspace: '/tmp/ws',
    model: 'scripted:/tmp/turns.json',
    limits: { maxIterations: 5, maxSteps: 10, maxMinutes: 2, noProgressLimit: 3, ...limits },
  };
}

function stateWith(overrides: Partial<GoalState> = {}, limits: Partial<GoalLimits> = {}): GoalState {
  return { ...initialGoalState(goal(limits)), ...overrides };
}

type Outcome = Parameters<typeof recordToolOutcome>[1];

function tool(toolName: string, extra: Partial<Outcome> = {}): Outcome {
  return { toolName, summary: `${toolName}: x`, ok: true, changedWorkspace: false, ...extra };
}

/** One iteration in which the given tool calls ran, then the model answered without a tool call. */
function iteration(state: GoalState, outcomes: Outcome[]): GoalState {
  let next = state;
  for (const outcome of outcomes) next = recordToolOutcome(next, outcome);
  return endIteration(next);
}

describe('limits defaults', () => {
  it('DEFAULT_LIMITS takes its values from limits.ts', () => {
    expect(DEFAULT_LIMITS).toEqual({
      maxIterations: DEFAULT_MAX_ITERATIONS,
      maxSteps: DEFAULT_MAX_STEPS,
      maxMinutes: DEFAULT_MAX_MINUTES,
      noProgressLimit: DEFAULT_NO_PROGRESS_LIMIT,
    });
  });

  it('running and the waits of a running goal are not final; every ending is', () => {
    for (const waiting of ['running', 'paused', 'waiting_approval'] as const) {
      expect(FINAL_STATUSES).not.toContain(waiting);
    }
    expect([...FINAL_STATUSES].sort()).toEqual(
      [
        'blocked',
        'budget_exhausted',
        'budget_reached',
        'cancelled',
        'cleared',
        'completed',
        'failed',
        'limit_reached',
      ].sort(),
    );
  });
});

describe('initialGoalState', () => {
  it('starts running in iteration 1 with zeroed counters', () => {
    const g = goal();
    const state = initialGoalState(g);
    expect(state).toMatchObject({
      goal: g,
      status: 'running',
      reason: null,
      iteration: 1,
      steps: 0,
      noProgress: 0,
      iterationProgress: false,
      planNudged: false,
      elapsedMsBefore: 0,
      lastTool: null,
      changes: [],
      recent: [],
      actions: 0,
      finishSummary: null,
      executions: 1,
      ledger: [],
    });
    expect(state.usage).toEqual(EMPTY_USAGE);
  });

  it('is not stopped by any rule at the start', () => {
    expect(checkStopRules(initialGoalState(goal()), 0)).toBeNull();
  });
});

describe('noteAction', () => {
  it('numbers actions from 1 and does not mutate its input', () => {
    const start = stateWith();
    const one = noteAction(start, 'first');
    const two = noteAction(one, 'second');
    expect(two.recent).toEqual([
      { n: 1, text: 'first' },
      { n: 2, text: 'second' },
    ]);
    expect(two.actions).toBe(2);
    expect(start.recent).toEqual([]);
    expect(start.actions).toBe(0);
  });

  it(`keeps only the newest ${RECENT_ACTIONS_KEPT} actions but keeps counting`, () => {
    let state = stateWith();
    for (let i = 1; i <= RECENT_ACTIONS_KEPT + 5; i++) state = noteAction(state, `a${i}`);
    expect(state.actions).toBe(RECENT_ACTIONS_KEPT + 5);
    expect(state.recent).toHaveLength(RECENT_ACTIONS_KEPT);
    expect(state.recent[0]).toEqual({ n: 6, text: 'a6' });
    expect(state.recent.at(-1)).toEqual({ n: RECENT_ACTIONS_KEPT + 5, text: `a${RECENT_ACTIONS_KEPT + 5}` });
  });
});

describe('recordToolOutcome', () => {
  it('marks progress for a workspace tool and remembers it as the last tool', () => {
    const state = recordToolOutcome(
      stateWith({ steps: 4 }),
      tool('file-write', { summary: 'file-write: a.txt', changedWorkspace: true }),
    );
    expect(state.iterationProgress).toBe(true);
    expect(state.lastTool).toBe('file-write: a.txt');
    expect(state.changes).toEqual(['file-write: a.txt']);
    expect(state.recent.at(-1)?.text).toBe('step 4 · file-write: a.txt');
  });

  it.each(['todo-write', 'task-create', 'task-update', 'finish'])('%s never counts as progress', (name) => {
    const state = recordToolOutcome(stateWith(), tool(name, { changedWorkspace: true }));
    expect(state.iterationProgress).toBe(false);
    // ...but it is still the last tool and still logged.
    expect(state.lastTool).toBe(`${name}: x`);
    expect(state.recent).toHaveLength(1);
  });

  it('a non-progress tool does not clear progress made earlier in the iteration', () => {
    let state = recordToolOutcome(stateWith(), tool('bash'));
    state = recordToolOutcome(state, tool('todo-write'));
    state = recordToolOutcome(state, tool('finish'));
    expect(state.iterationProgress).toBe(true);
  });

  it('read-only workspace tools count as progress (progress is "used a workspace tool")', () => {
    for (const name of ['file-read', 'grep', 'glob']) {
      expect(recordToolOutcome(stateWith(), tool(name)).iterationProgress).toBe(true);
    }
  });

  it('a failed workspace tool still counts as progress (current behaviour)', () => {
    // The progress rule looks only at the tool name, not at `ok`: see the report on whether it should.
    const state = recordToolOutcome(
      stateWith(),
      tool('bash', { ok: false, summary: 'bash: false', changedWorkspace: false }),
    );
    expect(state.iterationProgress).toBe(true);
    expect(state.recent.at(-1)?.text).toBe('step 0 · bash: false (error)');
  });

  it('records a change only when the tool succeeded and changed the workspace', () => {
    let state = stateWith();
    state = recordToolOutcome(state, tool('file-write', { summary: 'w1', changedWorkspace: true }));
    state = recordToolOutcome(
      state,
      tool('file-write', { summary: 'w2', changedWorkspace: true, ok: false }),
    );
    state = recordToolOutcome(state, tool('file-read', { summary: 'r1', changedWorkspace: false }));
    state = recordToolOutcome(state, tool('bash', { summary: 'b1', changedWorkspace: true }));
    expect(state.changes).toEqual(['w1', 'b1']);
  });

  it('keeps only the last 20 changes', () => {
    let state = stateWith();
    for (let i = 1; i <= 25; i++) {
      state = recordToolOutcome(state, tool('file-edit', { summary: `edit ${i}`, changedWorkspace: true }));
    }
    expect(state.changes).toHaveLength(20);
    expect(state.changes[0]).toBe('edit 6');
    expect(state.changes.at(-1)).toBe('edit 25');
  });

  it('does not mutate its input state', () => {
    const start = stateWith();
    recordToolOutcome(start, tool('file-write', { changedWorkspace: true }));
    expect(start.iterationProgress).toBe(false);
    expect(start.changes).toEqual([]);
    expect(start.lastTool).toBeNull();
  });
});

describe('endIteration', () => {
  it('advances the iteration and resets the per-iteration fields', () => {
    const during = stateWith({
      iteration: 3,
      iterationProgress: true,
      planNudged: true,
      changes: ['x'],
      noProgress: 2,
    });
    const next = endIteration(during);
    expect(next).toMatchObject({
      iteration: 4,
      iterationProgress: false,
      planNudged: false,
      changes: [],
      noProgress: 0,
    });
  });

  it('adds one to noProgress when the iteration made no progress', () => {
    expect(endIteration(stateWith({ noProgress: 1 })).noProgress).toBe(2);
  });

  it('keeps steps, lastTool and the recent log', () => {
    const during = noteAction(stateWith({ steps: 7, lastTool: 'bash: ls' }), 'x');
    const next = endIteration(during);
    expect(next.steps).toBe(7);
    expect(next.lastTool).toBe('bash: ls');
    expect(next.recent).toEqual(during.recent);
  });
});

describe('no-progress counting', () => {
  it('counts consecutive iterations with only non-progress tools (or no tools)', () => {
    let state = stateWith();
    state = iteration(state, [tool('todo-write')]);
    expect(state.noProgress).toBe(1);
    state = iteration(state, [tool('task-update')]);
    expect(state.noProgress).toBe(2);
    state = iteration(state, []);
    expect(state.noProgress).toBe(3);
  });

  it('reading a spooled output with tool-output is a tool call, so it is progress', () => {
    const state = iteration(stateWith(), [tool('tool-output')]);
    expect(state.noProgress).toBe(0);
  });

  it('an iteration with a workspace tool resets the count', () => {
    let state = stateWith();
    state = iteration(state, []);
    state = iteration(state, [tool('todo-write')]);
    expect(state.noProgress).toBe(2);
    state = iteration(state, [tool('todo-write'), tool('file-read')]);
    expect(state.noProgress).toBe(0);
    state = iteration(state, []);
    expect(state.noProgress).toBe(1);
  });

  it('an iteration with only failed workspace tools resets the count too (current behaviour)', () => {
    let state = stateWith();
    state = iteration(state, []);
    state = iteration(state, []);
    state = iteration(state, [tool('bash', { ok: false }), tool('file-edit', { ok: false })]);
    expect(state.noProgress).toBe(0);
  });

  it('blocks the goal exactly when noProgress reaches the limit', () => {
    let state = stateWith({}, { noProgressLimit: 3, maxIterations: 50 });
    state = iteration(state, []);
    state = iteration(state, [tool('todo-write')]);
    expect(checkStopRules(state, 0)).toBeNull();
    state = iteration(state, [tool('finish', { ok: false })]);
    expect(checkStopRules(state, 0)).toEqual({
      status: 'blocked',
      reason: 'no progress in 3 consecutive iterations (limit 3)',
    });
  });
});

describe('checkStopRules', () => {
  const limits = { maxIterations: 5, maxSteps: 10, maxMinutes: 2, noProgressLimit: 3 };

  it('no progress: one below the limit goes on, at the limit blocks', () => {
    expect(checkStopRules(stateWith({ noProgress: 2 }, limits), 0)).toBeNull();
    expect(checkStopRules(stateWith({ noProgress: 3 }, limits), 0)).toEqual({
      status: 'blocked',
      reason: 'no progress in 3 consecutive iterations (limit 3)',
    });
  });

  it('no progress: the reason names the actual count when it is past the limit', () => {
    expect(checkStopRules(stateWith({ noProgress: 4 }, limits), 0)?.reason).toBe(
      'no progress in 4 consecutive iterations (limit 3)',
    );
  });

  it('steps: one below the limit goes on, at the limit stops', () => {
    expect(checkStopRules(stateWith({ steps: 9 }, limits), 0)).toBeNull();
    expect(checkStopRules(stateWith({ steps: 10 }, limits), 0)).toEqual({
      status: 'limit_reached',
      reason: 'step limit reached (10 steps)',
      limit: 'steps',
    });
  });

  it('iterations: the last allowed iteration goes on, the one after it stops', () => {
    expect(checkStopRules(stateWith({ iteration: 5 }, limits), 0)).toBeNull();
    expect(checkStopRules(stateWith({ iteration: 6 }, limits), 0)).toEqual({
      status: 'limit_reached',
      reason: 'iteration limit reached (5 iterations)',
      limit: 'iterations',
    });
  });

  it('iterations: maxIterations full iterations run before the limit applies', () => {
    let state = stateWith({}, { ...limits, noProgressLimit: 100 });
    for (let i = 1; i < limits.maxIterations; i++) {
      state = iteration(state, [tool('bash')]);
      expect(checkStopRules(state, 0)).toBeNull();
    }
    state = iteration(state, [tool('bash')]);
    expect(checkStopRules(state, 0)?.reason).toBe('iteration limit reached (5 iterations)');
  });

  it('time: 1 ms before the limit goes on, at the limit stops', () => {
    const state = stateWith({}, limits);
    expect(checkStopRules(state, 2 * 60_000 - 1)).toBeNull();
    expect(checkStopRules(state, 2 * 60_000)).toEqual({
      status: 'limit_reached',
      reason: 'time limit reached (2 minutes)',
      limit: 'minutes',
    });
  });

  it('says one step, one iteration and one minute in the singular', () => {
    const one = { maxSteps: 1, maxIterations: 1, maxMinutes: 1, noProgressLimit: 1 };
    expect(checkStopRules(stateWith({ steps: 1 }, one), 0)?.reason).toBe('step limit reached (1 step)');
    expect(checkStopRules(stateWith({ iteration: 2 }, one), 0)?.reason).toBe(
      'iteration limit reached (1 iteration)',
    );
    expect(checkStopRules(stateWith({}, one), 60_000)?.reason).toBe('time limit reached (1 minute)');
    expect(checkStopRules(stateWith({ noProgress: 1 }, one), 0)?.reason).toBe(
      'no progress in 1 consecutive iteration (limit 1)',
    );
  });

  it('time: fractional minutes are honoured', () => {
    const state = stateWith({}, { ...limits, maxMinutes: 0.5 });
    expect(checkStopRules(state, 29_999)).toBeNull();
    expect(checkStopRules(state, 30_000)?.reason).toBe('time limit reached (0.5 minutes)');
  });

  it('checks the rules in order: no progress, steps, iterations, time', () => {
    const all = stateWith({ noProgress: 3, steps: 10, iteration: 6 }, limits);
    expect(checkStopRules(all, 10 * 60_000)?.status).toBe('blocked');
    expect(checkStopRules({ ...all, noProgress: 0 }, 10 * 60_000)?.reason).toMatch(/^step limit/);
    expect(checkStopRules({ ...all, noProgress: 0, steps: 0 }, 10 * 60_000)?.reason).toMatch(
      /^iteration limit/,
    );
    expect(checkStopRules({ ...all, noProgress: 0, steps: 0, iteration: 1 }, 10 * 60_000)?.reason).toMatch(
      /^time limit/,
    );
  });

  it('a limit of 0 stops at once (the rules do not validate limits themselves)', () => {
    expect(checkStopRules(stateWith({}, { noProgressLimit: 0 }), 0)?.status).toBe('blocked');
    expect(checkStopRules(stateWith({}, { maxSteps: 0 }), 0)?.reason).toBe('step limit reached (0 steps)');
    expect(checkStopRules(stateWith({}, { maxIterations: 0 }), 0)?.reason).toBe(
      'iteration limit reached (0 iterations)',
    );
    expect(checkStopRules(stateWith({}, { maxMinutes: 0 }), 0)?.reason).toBe(
      'time limit reached (0 minutes)',
    );
  });
});

describe('continuationMessage', () => {
  it('names the iteration, the limit and the objective, and lists the changes', () => {
    const state = stateWith({ iteration: 3 }, { maxIterations: 9 });
    const text = continuationMessage(state, ['file-write: a.txt', 'bash: npm test']);
    expect(text).toContain('(iteration 3 of at most 9)');
    expect(text).toContain(`Objective: ${OBJECTIVE}`);
    expect(text).toContain('In the last turn you did:\n- file-write: a.txt\n- bash: npm test');
    expect(text).not.toContain('changed nothing');
    expect(text).toContain('call `finish`');
    expect(text.startsWith('[goalrun] ')).toBe(true);
  });

  it('says so when the last turn changed nothing', () => {
    const text = continuationMessage(stateWith(), []);
    expect(text).toContain('The last turn changed nothing in the workspace.');
    expect(text).toContain(OBJECTIVE);
    expect(text).not.toContain('In the last turn you did');
  });

  it('keeps a multi-line objective intact', () => {
    const objective = 'line one\nline two: "quoted" `code`';
    const state = { ...stateWith(), goal: { ...goal(), objective } };
    expect(continuationMessage(state, [])).toContain(`Objective: ${objective}`);
  });
});

describe('keptProgressSummary', () => {
  it('names steps, iterations, rounded seconds and the objective', () => {
    const state = stateWith({ steps: 12, iteration: 4 });
    const text = keptProgressSummary(state, 61_499);
    expect(text.split('\n')[0]).toBe('Interrupted after 12 steps in 4 iterations (61 s).');
    expect(text).toContain(`Objective: ${OBJECTIVE}`);
    expect(text).not.toContain('Last tool call');
    expect(text).not.toContain('Recent actions');
    expect(keptProgressSummary(state, 61_500)).toContain('(62 s)');
  });

  it('names the call that was running, not only the last one that finished', () => {
    const state = stateWith({ lastTool: 'file-write: a.txt', runningTool: 'bash: sleep 120' });
    const text = keptProgressSummary(state, 0);
    expect(text).toContain('Interrupted call: bash: sleep 120');
    expect(text).toContain('Last tool call: file-write: a.txt');
    expect(text.indexOf('Interrupted call')).toBeLessThan(text.indexOf('Last tool call'));
  });

  it('says 1 step and 1 iteration in the singular', () => {
    expect(keptProgressSummary(stateWith({ steps: 1, iteration: 1 }), 0).split('\n')[0]).toBe(
      'Interrupted after 1 step in 1 iteration (0 s).',
    );
  });

  it('adds the last tool and at most the 8 newest actions', () => {
    let state = stateWith({ lastTool: 'bash: make' });
    for (let i = 1; i <= 10; i++) state = noteAction(state, `action ${i}`);
    const text = keptProgressSummary(state, 0);
    expect(text).toContain('Last tool call: bash: make');
    expect(text).toContain(
      `Recent actions:\n${[3, 4, 5, 6, 7, 8, 9, 10].map((i) => `- action ${i}`).join('\n')}`,
    );
    expect(text).not.toContain('- action 2\n');
  });
});

describe('resumeMessage', () => {
  it('says cancelled for a cancelled goal and includes kept progress', () => {
    const state = stateWith({ status: 'cancelled', executions: 2 });
    const text = resumeMessage(state, 'Interrupted after 3 steps');
    expect(text).toContain('was cancelled and has now been resumed (execution 2)');
    expect(text).toContain('Progress kept from before:\nInterrupted after 3 steps');
  });

  it('says stopped otherwise and leaves out empty kept progress', () => {
    const text = resumeMessage(stateWith({ status: 'limit_reached' }), null);
    expect(text).toContain('was stopped and has now been resumed');
    expect(text).not.toContain('Progress kept');
    expect(text).not.toContain('\n\n\n');
  });
});

describe('snapshotOf and detailsMarkdown', () => {
  it('copies the state into a snapshot', () => {
    const state = stateWith({ steps: 3, iteration: 2, noProgress: 1, lastTool: 'bash: ls' });
    const snapshot = snapshotOf(state, 'goalrun-sess-1', 1234);
    expect(snapshot).toEqual({
      sessionId: 'sess-1',
      workflowId: 'goalrun-sess-1',
      status: 'running',
      reason: null,
      objective: OBJECTIVE,
      model: 'scripted:/tmp/turns.json',
      workspace: '/tmp/ws',
      iteration: 2,
      steps: 3,
      noProgress: 1,
      elapsedMs: 1234,
      usage: EMPTY_USAGE,
      costUsd: 0,
      lastTool: 'bash: ls',
      finishSummary: null,
      recent: [],
      limits: { maxIterations: 5, maxSteps: 10, maxMinutes: 2, noProgressLimit: 3 },
      sandbox: 'workspace-write',
      approval: null,
      runningJobs: 0,
      modelNote: null,
      verified: false,
      checks: [],
    });
  });

  it('renders status, reason, counters and the recent log', () => {
    let state = stateWith({ status: 'blocked', reason: 'no key', steps: 3, lastTool: 'bash: ls' });
    for (let i = 1; i <= 9; i++) state = noteAction(state, `a${i}`);
    const md = detailsMarkdown(snapshotOf(state, 'w', 0));
    expect(md.split('\n')[0]).toBe('blocked — no key — goalrun resume sess-1 --message "…"');
    expect(md).toContain('**steps:** 3');
    expect(md).toContain('- **Last tool:** `bash: ls`');
    // A blank line after the heading, or the UI renders the items inline.
    expect(md).toContain('**Recent:**\n\n- a2\n');
    expect(md).not.toContain('- a1\n');
  });

  it('renders a dash for no last tool and no reason', () => {
    const md = detailsMarkdown(snapshotOf(stateWith(), 'w', 0));
    expect(md.split('\n')[0]).toBe('running — step 0, iteration 1 — goalrun watch sess-1');
    expect(md).toContain('- **Last tool:** —');
    expect(md).not.toContain('**Recent:**');
  });
});

describe('the budget in the snapshot and the Web UI (issue 18)', () => {
  it('shows spent, reserved and cap for a goal with a cap, and nothing for one without', () => {
    const capped = stateWith(
      {
        usage: { ...EMPTY_USAGE, totalTokens: 1_500 },
        budgetReserved: { costUsd: 0.01, tokens: 1_000 },
      },
      { maxCostUsd: 0.05 },
    );
    const snapshot = snapshotOf(capped, 'goalrun-sess-1', 0);
    expect(snapshot.budget).toEqual({
      spentUsd: 0,
      reservedUsd: 0.01,
      capUsd: 0.05,
      spentTokens: 1_500,
      reservedTokens: 1_000,
      capTokens: null,
    });
    expect(detailsMarkdown(snapshot)).toContain(
      // Escaped: the UI's Markdown reads `$…$` as math.
      '**Budget:** \\$0.0000 spent, \\$0.0100 reserved, cap \\$0.0500 · 1500 tokens, 1000 reserved, cap none',
    );
    const uncapped = snapshotOf(stateWith(), 'goalrun-sess-1', 0);
    expect(uncapped.budget).toBeUndefined();
    expect(detailsMarkdown(uncapped)).not.toContain('Budget');
  });
});
