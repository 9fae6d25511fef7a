import { describe, expect, it } from 'vitest';
import { applyTodoWrite, TASK_STATUSES, type TaskGraph } from '../../core/task-graph';
import { parseTodoWriteArgs, todoWriteToolSpec } from '../../core/todo-write-schema';
import {
  isPlanOnlyStep,
  isTodoWriteCall,
  LEGACY_TASK_TOOL_ALIASES,
  legacyCallToTodoWrite,
  PLAN_ONLY_NUDGE,
} from '../../core/todo-write-tool';

const GRAPH: TaskGraph = [
  { id: 'task-1', content: 'Write the parser', status: 'completed', dependencies: [] },
  { id: 'task-2', content: 'Add tests', status: 'pending', dependencies: ['task-1'] },
];

/** Runs a legacy call through the mapping and validation (the model step) and todo-write (the workflow). */
const viaAlias = (toolName: string, args: unknown, graph = GRAPH) =>
  applyTodoWrite(graph, parseTodoWriteArgs(legacyCallToTodoWrite(toolName, args)));

const TODO_WRITE_TOOL_SPEC = todoWriteToolSpec();

/** The parts of a JSON Schema object these tests read. */
interface JsonObjectSchema {
  type: string;
  additionalProperties?: boolean;
  properties: Record<string, { type?: string; enum?: string[]; description?: string; items?: unknown }>;
}

describe('TODO_WRITE_TOOL_SPEC', () => {
  it('is named todo-write and tells the model when to use it', () => {
    expect(TODO_WRITE_TOOL_SPEC.name).toBe('todo-write');
    expect(TODO_WRITE_TOOL_SPEC.description).toContain('genuinely multi-step work');
    expect(TODO_WRITE_TOOL_SPEC.description).toContain('Never make it the only call in a step');
    for (const term of [
      'merge: true',
      'delete',
      'clear_completed',
      'only reads',
      'task-N',
      'dependency order',
    ]) {
      expect(TODO_WRITE_TOOL_SPEC.description).toContain(term);
    }
  });

  it('offers exactly the fields todo-write accepts, as a clean JSON Schema from its zod schema', () => {
    const schema = TODO_WRITE_TOOL_SPEC.inputSchema as unknown as JsonObjectSchema;
    expect(schema.type).toBe('object');
    expect(schema).not.toHaveProperty('$schema');
    expect(schema).not.toHaveProperty('required');
    expect(schema.additionalProperties).toBe(false);
    expect(Object.keys(schema.properties)).toEqual(['todos', 'merge', 'delete', 'clear_completed']);
    const item = schema.properties.todos.items as JsonObjectSchema;
    // Closed to the model, though the parser ignores unknown task fields with a note.
    expect(item.additionalProperties).toBe(false);
    expect(Object.keys(item.properties)).toEqual(['id', 'content', 'status', 'dependencies']);
    expect(item.properties.status.enum).toEqual([...TASK_STATUSES]);
    expect(item.properties.dependencies).toMatchObject({ type: 'array', items: { type: 'string' } });
    expect(schema.properties.delete).toMatchObject({ type: 'array', items: { type: 'string' } });
    expect(schema.properties.merge.type).toBe('boolean');
    // Every field carries its .describe() text to the model.
    for (const field of [...Object.values(schema.properties), ...Object.values(item.properties)]) {
      expect(field.description).toMatch(/\w{3,}/);
    }
    expect(JSON.parse(JSON.stringify(TODO_WRITE_TOOL_SPEC))).toEqual(TODO_WRITE_TOOL_SPEC);
  });
});

describe('isTodoWriteCall', () => {
  it('recognizes todo-write and every retired alias, nothing else', () => {
    expect(LEGACY_TASK_TOOL_ALIASES).toEqual([
      'task-create',
      'task-update',
      'task-get',
      'task-list',
      'task-delete',
    ]);
    for (const name of ['todo-write', ...LEGACY_TASK_TOOL_ALIASES]) expect(isTodoWriteCall(name)).toBe(true);
    for (const name of ['bash', 'finish', 'todo_write', 'task-run', ''])
      expect(isTodoWriteCall(name)).toBe(false);
  });
});

describe('plan-only nudge', () => {
  it('is the line the spec gives', () => {
    expect(PLAN_ONLY_NUDGE).toBe(
      'Plan updated. Continue with the next concrete action in the same response next time.',
    );
  });

  it('applies only to a step whose calls are all successful todo-write calls', () => {
    expect(isPlanOnlyStep([{ toolName: 'todo-write', ok: true }])).toBe(true);
    expect(
      isPlanOnlyStep([
        { toolName: 'todo-write', ok: true },
        { toolName: 'task-update', ok: true },
      ]),
    ).toBe(true);
    expect(isPlanOnlyStep([{ toolName: 'todo-write', ok: false }])).toBe(false);
    expect(
      isPlanOnlyStep([
        { toolName: 'todo-write', ok: true },
        { toolName: 'bash', ok: true },
      ]),
    ).toBe(false);
    expect(isPlanOnlyStep([])).toBe(false);
  });
});

describe('legacyCallToTodoWrite', () => {
  it('maps task-create onto a merge insert', () => {
    expect(legacyCallToTodoWrite('task-create', { content: 'Docs', dependencies: ['task-2'] })).toEqual({
      todos: [{ content: 'Docs', dependencies: ['task-2'] }],
      merge: true,
    });
    const outcome = viaAlias('task-create', { content: 'Docs', dependencies: ['task-2'] });
    expect(outcome.ok).toBe(true);
    expect(outcome.graph).toEqual([
      ...GRAPH,
      { id: 'task-3', content: 'Docs', status: 'pending', dependencies: ['task-2'] },
    ]);
  });

  it('keeps an id given to task-create', () => {
    expect(viaAlias('task-create', { id: 'docs', content: 'Docs' }).graph[2].id).toBe('docs');
  });

  it('maps task-update onto a merge update that keeps fields left out', () => {
    expect(legacyCallToTodoWrite('task-update', { id: 'task-2', status: 'in_progress' })).toEqual({
      todos: [{ id: 'task-2', status: 'in_progress' }],
      merge: true,
    });
    const outcome = viaAlias('task-update', JSON.stringify({ id: 'task-2', status: 'in_progress' }));
    expect(outcome.graph[1]).toEqual({ ...GRAPH[1], status: 'in_progress' });
  });

  it('refuses a task-update without an id instead of inserting a task', () => {
    const outcome = viaAlias('task-update', { content: 'Add more tests' });
    expect(outcome.ok).toBe(false);
    expect(outcome.result).toBe(
      'todo-write: todos[0].id must be 1-64 letters, digits or . _ : / - starting with a letter or digit (got "")\nNothing was changed.',
    );
  });

  it('maps task-get and task-list onto a read', () => {
    for (const name of ['task-get', 'task-list']) {
      expect(legacyCallToTodoWrite(name, { id: 'task-1' })).toEqual({});
      const outcome = viaAlias(name, undefined);
      expect(outcome.ok).toBe(true);
      expect(outcome.changed).toBe(false);
      expect(outcome.result).toContain('[x] task-1 Write the parser');
    }
  });

  it('maps task-delete with id or ids onto delete', () => {
    expect(legacyCallToTodoWrite('task-delete', { id: 'task-1' })).toEqual({ delete: ['task-1'] });
    expect(legacyCallToTodoWrite('task-delete', { ids: ['task-1', 'task-2'] })).toEqual({
      delete: ['task-1', 'task-2'],
    });
    const outcome = viaAlias('task-delete', { id: 'task-1' });
    expect(outcome.graph).toEqual([{ ...GRAPH[1], dependencies: [] }]);
    expect(outcome.notes).toEqual(['deleted task-1', 'task-2: removed dependency on deleted task-1']);
  });

  it('refuses a task-delete without an id instead of reading', () => {
    expect(viaAlias('task-delete', {}).result).toBe(
      'todo-write: delete[0] must be a non-empty task id string (got "")\nNothing was changed.',
    );
  });

  it('lets todo-write report arguments it cannot map', () => {
    expect(viaAlias('task-create', '{oops').result).toBe(
      'todo-write: arguments must be a JSON object; got a string that is not valid JSON\nNothing was changed.',
    );
    expect(viaAlias('task-create', { title: 'Docs' }).result).toBe(
      'todo-write: todos[0].content must be a non-empty string (a task without an id is a new task)\nNothing was changed.',
    );
  });

  it('passes todo-write arguments and other names through unchanged', () => {
    const args = { todos: [{ content: 'x' }] };
    expect(legacyCallToTodoWrite('todo-write', args)).toBe(args);
    expect(legacyCallToTodoWrite('bash', args)).toBe(args);
  });
});
