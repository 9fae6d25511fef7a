import { describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS, initialGoalState } from '../../core/goal';
import { WORKFLOW_TOOL_ARGS_MAX_BYTES } from '../../core/limits';
import type { TaskGraph } from '../../core/task-graph';
import {
  parseWorkflowToolArgs,
  type WorkflowToolArgs,
  workflowToolArgsFor,
} from '../../core/workflow-tool-args';
import {
  handleWorkflowTool,
  unvalidatedWorkflowToolArgs,
  type WorkflowToolCall,
} from '../../core/workflow-tools';

const TASKS: TaskGraph = [
  { id: 'task-1', content: 'Write the parser', status: 'completed', dependencies: [] },
  { id: 'task-2', content: 'Add tests', status: 'pending', dependencies: ['task-1'] },
];

/** A goal state holding TASKS, as the workflow keeps it. */
function stateWithTasks() {
  const state = initialGoalState({
    sessionId: 's',
    objective: 'o',
    workspace: '/w',
    model: 'scripted:x',
    limits: DEFAULT_LIMITS,
  });
  return { ...state, tasks: TASKS };
}

/** The calls of a goal step, from clean to sloppy to wrong, for todo-write, its aliases and finish. */
const CALLS: Array<[string, unknown]> = [
  ['todo-write', { merge: true, todos: [{ id: 'task-2', status: 'in_progress' }] }],
  ['todo-write', JSON.stringify({ todos: [{ content: ' New plan ', activeForm: 'x' }] })],
  ['todo-write', { merge: null, todos: '[{"content":"a","dependencies":"task-1"}]', delete: null }],
  ['todo-write', { todos: [{ content: '', status: 'done' }, 3], bogus: 1 }],
  ['todo-write', '{not json'],
  ['todo-write', undefined],
  ['task-create', { content: 'Docs', dependencies: ['task-2'] }],
  ['task-update', { content: 'no id' }],
  ['task-delete', { ids: ['task-1'] }],
  ['task-list', {}],
  ['finish', { status: 'complete', summary: 'done and tested', extra: true }],
  ['finish', { status: 'done', summary: ' ' }],
  ['finish', '{"status":"blocked","summary":"need a key"}'],
];

describe('workflow tool arguments, validated at the model step', () => {
  it('are handed to the workflow parsed and normalized', () => {
    expect(
      workflowToolArgsFor('todo-write', { merge: null, todos: '[{"id":" a ","content":" x ","p":1}]' }),
    ).toEqual({
      tool: 'todo-write',
      parsed: {
        ok: true,
        args: {
          todos: [{ index: 0, id: 'a', content: 'x' }],
          merge: false,
          delete: [],
          clearCompleted: false,
        },
        notes: ['ignored unknown task fields: p (a task has id, content, status, dependencies)'],
      },
    });
    expect(workflowToolArgsFor('task-delete', { id: 'task-1' })).toEqual({
      tool: 'todo-write',
      parsed: {
        ok: true,
        args: { merge: false, delete: ['task-1'], clearCompleted: false },
        notes: [],
      },
    });
    expect(workflowToolArgsFor('finish', '{"status":"complete","summary":"ok"}')).toEqual({
      tool: 'finish',
      parsed: { ok: true, args: { status: 'complete', summary: 'ok' } },
    });
  });

  it('are left to the store for every other tool', () => {
    expect(workflowToolArgsFor('bash', { command: 'ls' })).toBeUndefined();
    expect(workflowToolArgsFor('file-write', { path: 'a', content: 'x' })).toBeUndefined();
  });

  it('are refused unread when larger than a workflow payload may carry', () => {
    const content = 'x'.repeat(WORKFLOW_TOOL_ARGS_MAX_BYTES);
    const input = { todos: [{ content }] };
    const todoWrite = workflowToolArgsFor('todo-write', input);
    expect(todoWrite?.parsed).toEqual({
      ok: false,
      errors: [
        `arguments too large (${JSON.stringify(input).length} bytes, at most ${WORKFLOW_TOOL_ARGS_MAX_BYTES}); send fewer or shorter items`,
      ],
    });
    const finish = workflowToolArgsFor('finish', { status: 'complete', summary: content });
    expect(finish?.parsed).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^invalid arguments for finish: arguments too large \(\d+ bytes/),
    });
    // One under the limit is read.
    const fits = 'x'.repeat(WORKFLOW_TOOL_ARGS_MAX_BYTES - 40);
    expect(workflowToolArgsFor('finish', { status: 'complete', summary: fits })?.parsed.ok).toBe(true);
  });

  it('cut a list of problems short when it would outgrow the payload', () => {
    for (const count of [10, 1_000, 20_000]) {
      const args = workflowToolArgsFor('todo-write', { todos: Array.from({ length: count }, () => 1) });
      if (args?.tool !== 'todo-write' || args.parsed.ok) throw new Error('expected a rejection');
      const { errors } = args.parsed;
      expect(JSON.stringify(errors).length).toBeLessThan(WORKFLOW_TOOL_ARGS_MAX_BYTES + 100);
      expect(errors[0]).toBe(
        'todos[0] must be an object with content and optionally id, status, dependencies',
      );
      if (errors.length < count) {
        expect(errors.at(-1)).toBe(`… and ${count - errors.length + 1} more problems`);
      } else {
        expect(errors).toHaveLength(count);
      }
    }
  });

  it('survive the trip through a Temporal payload (JSON) unchanged', () => {
    for (const [toolName, input] of CALLS) {
      const args = workflowToolArgsFor(toolName, input);
      expect(JSON.parse(JSON.stringify(args)), `${toolName} ${JSON.stringify(input)}`).toEqual(args);
    }
  });
});

describe('a call the model step passed no arguments for', () => {
  it('is refused with a reason the model can act on, changing nothing', () => {
    const state = stateWithTasks();
    for (const toolName of ['todo-write', 'task-update', 'finish']) {
      const call: WorkflowToolCall = { toolCallId: 'c1', toolName, input: { todos: [] } };
      const outcome = handleWorkflowTool(state, call, unvalidatedWorkflowToolArgs(call));
      expect(outcome.ok, toolName).toBe(false);
      expect(outcome.text, toolName).toMatch(/send the call again/);
      expect(outcome.state.tasks).toEqual(state.tasks);
      expect(outcome.finished).toBeUndefined();
    }
    expect(parseWorkflowToolArgs('bash', {})).toBeUndefined();
  });
});

describe('the workflow handling validated arguments', () => {
  it('applies todo-write and its aliases to the task graph, rejections changing nothing', () => {
    const state = stateWithTasks();
    const started = handleWorkflowTool(
      state,
      { toolCallId: 'c', toolName: 'task-update' },
      workflowToolArgsFor('task-update', { id: 'task-2', status: 'in_progress' }) as WorkflowToolArgs,
    );
    expect(started.ok).toBe(true);
    expect(started.state.tasks[1].status).toBe('in_progress');
    const bad = handleWorkflowTool(
      state,
      { toolCallId: 'c', toolName: 'todo-write' },
      workflowToolArgsFor('todo-write', { todos: [{ content: 'x', status: 'done' }] }) as WorkflowToolArgs,
    );
    expect(bad.ok).toBe(false);
    expect(bad.state.tasks).toBe(TASKS);
    expect(bad.text).toBe(
      'todo-write: todos[0].status must be one of pending, in_progress, completed, blocked, cancelled (got "done")\nNothing was changed.',
    );
  });

  it('ends the goal on a valid finish, and explains an invalid one', () => {
    const state = stateWithTasks();
    const blocked = handleWorkflowTool(
      state,
      { toolCallId: 'c', toolName: 'finish' },
      workflowToolArgsFor('finish', { status: 'blocked', summary: 'need a key' }) as WorkflowToolArgs,
    );
    expect(blocked.finished).toEqual({ status: 'blocked', reason: 'need a key' });
    expect(blocked.state.finishSummary).toBe('need a key');
    const invalid = handleWorkflowTool(
      state,
      { toolCallId: 'c', toolName: 'finish' },
      workflowToolArgsFor('finish', { status: 'done' }) as WorkflowToolArgs,
    );
    expect(invalid.finished).toBeUndefined();
    expect(invalid.text).toBe(
      'invalid arguments for finish: status: expected "complete" or "blocked", received "done"; summary: expected a non-empty string',
    );
  });
});
