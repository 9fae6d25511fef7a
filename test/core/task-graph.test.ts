import { describe, expect, it } from 'vitest';
import {
  applyTodoWrite,
  dependencyOrder,
  findCycle,
  MAX_TASK_CONTENT_CHARS,
  MAX_TASK_GRAPH_BYTES,
  MAX_TASKS,
  renderTaskList,
  renderTasksMarkdown,
  summarizeTaskList,
  type Task,
  type TaskGraph,
  taskView,
} from '../../core/task-graph';
import { parseTodoWriteArgs } from '../../core/todo-write-schema';

const task = (
  id: string,
  content: string,
  status: Task['status'] = 'pending',
  dependencies: string[] = [],
): Task => ({
  id,
  content,
  status,
  dependencies,
});

/** Freezes the graph deeply, so any mutation of the caller's state throws. */
function frozen(graph: TaskGraph): TaskGraph {
  for (const t of graph) {
    Object.freeze(t.dependencies);
    Object.freeze(t);
  }
  return Object.freeze(graph) as TaskGraph;
}

/** A small plan: parser done, tests in progress after it, ship after tests, docs free. */
const PLAN: TaskGraph = frozen([
  task('task-1', 'Write the parser', 'completed'),
  task('task-2', 'Add tests', 'in_progress', ['task-1']),
  task('task-3', 'Ship it', 'pending', ['task-2']),
  task('task-4', 'Docs'),
]);

const ids = (graph: TaskGraph) => graph.map((t) => t.id);

/** Validates the model's raw arguments, as the model step does, and applies them, as the workflow does. */
const apply = (graph: TaskGraph, args: unknown, subAgent = false) =>
  applyTodoWrite(graph, parseTodoWriteArgs(args), { subAgent });

/** Applies a call that must succeed and returns its outcome. */
function ok(graph: TaskGraph, args: unknown, subAgent = false) {
  const outcome = apply(graph, args, subAgent);
  expect(outcome.ok, outcome.result).toBe(true);
  return outcome;
}

/** Applies a call that must be rejected, checks it changed nothing, and returns its text. */
function rejected(graph: TaskGraph, args: unknown, subAgent = false): string {
  const outcome = apply(graph, args, subAgent);
  expect(outcome.ok).toBe(false);
  expect(outcome.changed).toBe(false);
  expect(outcome.graph).toBe(graph);
  expect(outcome.notes).toEqual([]);
  expect(outcome.view).toEqual(taskView(graph));
  return outcome.result;
}

describe('full replace', () => {
  it('writes the whole list, numbering tasks without an id and defaulting status to pending', () => {
    const outcome = ok([], {
      todos: [
        { content: 'Write the parser', status: 'completed' },
        { content: 'Add tests', status: 'in_progress', dependencies: ['task-1'] },
        { content: 'Ship it', dependencies: ['task-2'] },
        { content: 'Docs' },
      ],
    });
    expect(outcome.graph).toEqual(PLAN);
    expect(outcome.changed).toBe(true);
    expect(outcome.notes).toEqual([]);
    expect(outcome.result).toBe(
      [
        '4 tasks: 2 pending, 1 in progress, 1 completed. Ready: task-4.',
        '[x] task-1 Write the parser',
        '[>] task-2 Add tests (depends on task-1)',
        '[ ] task-3 Ship it (depends on task-2; blocked by task-2)',
        '[ ] task-4 Docs (ready)',
      ].join('\n'),
    );
  });

  it('drops every stored task the new list does not name', () => {
    const outcome = ok(PLAN, { todos: [{ id: 'task-4', content: 'Docs, rewritten' }, { content: 'New' }] });
    expect(outcome.graph).toEqual([task('task-4', 'Docs, rewritten'), task('task-5', 'New')]);
  });

  it('numbers new tasks past the ids written in the same call', () => {
    const outcome = ok([], { todos: [{ content: 'a' }, { id: 'task-1', content: 'b' }] });
    expect(ids(outcome.graph)).toEqual(['task-2', 'task-1']);
  });

  it('empties the list with an empty todos', () => {
    const outcome = ok(PLAN, { todos: [] });
    expect(outcome.graph).toEqual([]);
    expect(outcome.result).toBe('No tasks.');
  });

  it('needs every task whole, since a replace does not keep stored fields', () => {
    expect(rejected(PLAN, { todos: [{ id: 'task-1', status: 'completed' }] })).toBe(
      'todo-write: todos[0].content must be a non-empty string (a full replace writes every task whole; use merge: true to change only some fields)\nNothing was changed.',
    );
  });

  it('applies the dependency rules to a replace too', () => {
    expect(
      rejected([], {
        todos: [
          { id: 'a', content: 'first' },
          { id: 'b', content: 'second', status: 'completed', dependencies: ['a'] },
        ],
      }),
    ).toBe('todo-write: b cannot be completed while its dependency a is pending\nNothing was changed.');
  });
});

describe('merge', () => {
  it('updates only the given fields; fields left out keep their stored value', () => {
    const outcome = ok(PLAN, { merge: true, todos: [{ id: 'task-3', content: 'Ship v1' }] });
    expect(outcome.graph).toEqual([
      PLAN[0],
      PLAN[1],
      task('task-3', 'Ship v1', 'pending', ['task-2']),
      PLAN[3],
    ]);
    const status = ok(PLAN, { merge: true, todos: [{ id: 'task-2', status: 'completed' }] });
    expect(status.graph[1]).toEqual(task('task-2', 'Add tests', 'completed', ['task-1']));
  });

  it('replaces the stored dependencies when dependencies are given', () => {
    const outcome = ok(PLAN, { merge: true, todos: [{ id: 'task-3', dependencies: ['task-4'] }] });
    expect(outcome.graph[2].dependencies).toEqual(['task-4']);
  });

  it('inserts new tasks at the end, by their id or with the next free task-N', () => {
    const outcome = ok(PLAN, {
      merge: true,
      todos: [
        { id: 'lint', content: 'Run the linter' },
        { content: 'Release notes', dependencies: ['lint'] },
      ],
    });
    expect(outcome.graph.slice(4)).toEqual([
      task('lint', 'Run the linter'),
      task('task-5', 'Release notes', 'pending', ['lint']),
    ]);
  });

  it('numbers past the highest task-N in the list, not into a gap', () => {
    const outcome = ok([task('task-1', 'a'), task('task-7', 'b')], {
      merge: true,
      todos: [{ content: 'c' }],
    });
    expect(ids(outcome.graph)).toEqual(['task-1', 'task-7', 'task-8']);
  });

  it('lets a task depend on one created earlier in the same call', () => {
    const outcome = ok([], {
      merge: true,
      todos: [{ content: 'a' }, { content: 'b', dependencies: ['task-1'] }],
    });
    expect(outcome.graph[1].dependencies).toEqual(['task-1']);
  });

  it('needs content for a new task', () => {
    expect(rejected(PLAN, { merge: true, todos: [{ status: 'pending' }] })).toBe(
      'todo-write: todos[0].content must be a non-empty string (a task without an id is a new task)\nNothing was changed.',
    );
    expect(rejected(PLAN, { merge: true, todos: [{ id: 'task-9', status: 'pending' }] })).toBe(
      'todo-write: todos[0].content must be a non-empty string (task-9 is a new task)\nNothing was changed.',
    );
  });

  it('reports no change, and returns the same graph, when the values are already stored', () => {
    const outcome = ok(PLAN, { merge: true, todos: [{ id: 'task-4', content: 'Docs' }] });
    expect(outcome.changed).toBe(false);
    expect(outcome.graph).toBe(PLAN);
  });

  it('adds a copy when a task without an id repeats stored content (only sub-agents update by content)', () => {
    const outcome = ok(PLAN, { merge: true, todos: [{ content: 'Docs' }] });
    expect(ids(outcome.graph)).toEqual(['task-1', 'task-2', 'task-3', 'task-4', 'task-5']);
  });
});

describe('delete', () => {
  it('removes tasks by id and strips references to them, with notes', () => {
    const outcome = ok(PLAN, { delete: ['task-2'] });
    expect(outcome.graph).toEqual([PLAN[0], task('task-3', 'Ship it'), PLAN[3]]);
    expect(outcome.notes).toEqual(['deleted task-2', 'task-3: removed dependency on deleted task-2']);
    expect(outcome.result).toContain('[ ] task-3 Ship it (ready)');
    expect(outcome.result).toContain(
      'Notes:\n- deleted task-2\n- task-3: removed dependency on deleted task-2',
    );
  });

  it('accepts a single id as a string', () => {
    expect(ids(ok(PLAN, { delete: 'task-4' }).graph)).toEqual(['task-1', 'task-2', 'task-3']);
  });

  it('notes ids it does not know instead of failing', () => {
    const outcome = ok(PLAN, { delete: ['task-9'] });
    expect(outcome.changed).toBe(false);
    expect(outcome.notes).toEqual(['delete: no task task-9']);
  });

  it('refuses to write and delete the same task in one call', () => {
    expect(rejected(PLAN, { merge: true, todos: [{ id: 'task-4', content: 'x' }], delete: ['task-4'] })).toBe(
      'todo-write: task-4 is both written in todos and listed in delete\nNothing was changed.',
    );
  });

  it('frees a dependent to start when its unfinished dependency is deleted in the same call', () => {
    const outcome = ok(PLAN, {
      merge: true,
      todos: [{ id: 'task-3', status: 'in_progress' }],
      delete: ['task-2'],
    });
    expect(outcome.graph.find((t) => t.id === 'task-3')).toEqual(task('task-3', 'Ship it', 'in_progress'));
  });
});

describe('clear_completed', () => {
  it('prunes completed and cancelled tasks and strips references to them', () => {
    const graph = frozen([...PLAN, task('task-5', 'Old idea', 'cancelled')]);
    const outcome = ok(graph, { clear_completed: true });
    expect(outcome.graph).toEqual([task('task-2', 'Add tests', 'in_progress'), PLAN[2], PLAN[3]]);
    expect(outcome.notes).toEqual(['clear_completed: removed task-1, task-5']);
  });

  it('runs after the todos of the same call', () => {
    const outcome = ok(PLAN, {
      merge: true,
      todos: [{ id: 'task-2', status: 'completed' }],
      clear_completed: true,
    });
    expect(ids(outcome.graph)).toEqual(['task-3', 'task-4']);
    expect(outcome.view.find((t) => t.id === 'task-3')?.ready).toBe(true);
  });

  it('notes when there is nothing to clear', () => {
    const outcome = ok([task('task-1', 'a')], { clear_completed: true });
    expect(outcome.changed).toBe(false);
    expect(outcome.notes).toEqual(['clear_completed: no completed or cancelled tasks']);
  });
});

describe('read-only calls', () => {
  it.each([
    ['an empty object', {}],
    ['no arguments', undefined],
    ['null', null],
    ['an empty string', ''],
    ['an empty JSON object', '{}'],
    ['merge alone', { merge: true }],
    ['false flags and empty lists', { clear_completed: false, delete: [] }],
  ])('%s only reads the list', (_label, args) => {
    const outcome = ok(PLAN, args);
    expect(outcome.changed).toBe(false);
    expect(outcome.graph).toBe(PLAN);
    expect(outcome.view).toEqual(taskView(PLAN));
    expect(outcome.result).toContain('[>] task-2 Add tests (depends on task-1)');
  });
});

describe('dependency order and derived state', () => {
  it('puts every task after its dependencies and otherwise keeps insertion order', () => {
    const graph = [
      task('a', 'a', 'pending', ['c']),
      task('b', 'b'),
      task('c', 'c'),
      task('d', 'd', 'pending', ['a']),
    ];
    expect(ids(dependencyOrder(graph))).toEqual(['b', 'c', 'a', 'd']);
    expect(ids(dependencyOrder([task('x', 'x'), task('y', 'y'), task('z', 'z')]))).toEqual(['x', 'y', 'z']);
  });

  it('derives blocked_by from unfinished dependencies and ready for pending tasks with none', () => {
    const graph = [
      task('done', 'done', 'completed'),
      task('dropped', 'dropped', 'cancelled'),
      task('open', 'open'),
      task('after-done', 'x', 'pending', ['done', 'dropped']),
      task('after-open', 'x', 'pending', ['done', 'open']),
      task('stuck', 'x', 'blocked'),
      task('busy', 'x', 'in_progress', ['done']),
    ];
    const view = taskView(graph);
    const derived = Object.fromEntries(view.map((t) => [t.id, { blocked_by: t.blocked_by, ready: t.ready }]));
    expect(derived).toEqual({
      done: { blocked_by: [], ready: false },
      dropped: { blocked_by: [], ready: false },
      open: { blocked_by: [], ready: true },
      'after-done': { blocked_by: [], ready: true },
      'after-open': { blocked_by: ['open'], ready: false },
      stuck: { blocked_by: [], ready: false },
      busy: { blocked_by: [], ready: false },
    });
  });

  it('returns the list in dependency order from every call', () => {
    const outcome = ok([], { todos: [{ content: 'b', dependencies: ['task-2'] }, { content: 'a' }] });
    expect(outcome.view.map((t) => t.id)).toEqual(['task-2', 'task-1']);
    expect(outcome.result.split('\n').slice(1)).toEqual([
      '[ ] task-2 a (ready)',
      '[ ] task-1 b (depends on task-2; blocked by task-2)',
    ]);
  });

  it('finds a cycle as a closed path', () => {
    expect(findCycle([task('a', 'a', 'pending', ['b']), task('b', 'b', 'pending', ['a'])])).toEqual([
      'a',
      'b',
      'a',
    ]);
    expect(findCycle(PLAN)).toBeUndefined();
  });
});

describe('dependency validation', () => {
  it('rejects a self-reference', () => {
    expect(rejected(PLAN, { merge: true, todos: [{ id: 'task-4', dependencies: ['task-4'] }] })).toBe(
      'todo-write: task-4 depends on itself\nNothing was changed.',
    );
  });

  it('rejects a cycle and names it', () => {
    expect(rejected(PLAN, { merge: true, todos: [{ id: 'task-1', dependencies: ['task-3'] }] })).toBe(
      'todo-write: dependency cycle task-1 -> task-3 -> task-2 -> task-1\nNothing was changed.',
    );
    expect(
      rejected([], {
        todos: [
          { id: 'a', content: 'a', dependencies: ['b'] },
          { id: 'b', content: 'b', dependencies: ['a'] },
        ],
      }),
    ).toBe('todo-write: dependency cycle a -> b -> a\nNothing was changed.');
  });

  it('drops dependencies on unknown ids with a note', () => {
    const outcome = ok(PLAN, {
      merge: true,
      todos: [
        { id: 'task-4', dependencies: ['task-1', 'task-9'] },
        { content: 'x', dependencies: ['nope', 'gone'] },
      ],
    });
    expect(outcome.graph[3].dependencies).toEqual(['task-1']);
    expect(outcome.graph[4].dependencies).toEqual([]);
    expect(outcome.notes).toEqual([
      'task-4: dropped unknown dependency task-9',
      'task-5: dropped unknown dependencies nope, gone',
    ]);
    expect(outcome.result).toContain('Notes:\n- task-4: dropped unknown dependency task-9');
  });

  it('keeps a task out of in_progress and completed while a dependency is unfinished', () => {
    expect(rejected(PLAN, { merge: true, todos: [{ id: 'task-3', status: 'in_progress' }] })).toBe(
      'todo-write: task-3 cannot be in_progress while its dependency task-2 is in_progress\nNothing was changed.',
    );
    expect(rejected(PLAN, { merge: true, todos: [{ id: 'task-3', status: 'completed' }] })).toBe(
      'todo-write: task-3 cannot be completed while its dependency task-2 is in_progress\nNothing was changed.',
    );
  });

  it('allows those moves once the dependency is completed or cancelled', () => {
    const done = ok(PLAN, {
      merge: true,
      todos: [
        { id: 'task-2', status: 'completed' },
        { id: 'task-3', status: 'in_progress' },
      ],
    });
    expect(done.graph[2].status).toBe('in_progress');
    const cancelled = ok(PLAN, {
      merge: true,
      todos: [
        { id: 'task-2', status: 'cancelled' },
        { id: 'task-3', status: 'completed' },
      ],
    });
    expect(cancelled.graph[2].status).toBe('completed');
  });

  it('rejects giving a started task an unfinished dependency', () => {
    expect(
      rejected(PLAN, { merge: true, todos: [{ id: 'task-2', dependencies: ['task-1', 'task-4'] }] }),
    ).toBe(
      'todo-write: task-2 cannot be in_progress while its dependency task-4 is pending\nNothing was changed.',
    );
  });

  it('rejects reopening a dependency of a started or completed task, naming the move', () => {
    expect(rejected(PLAN, { merge: true, todos: [{ id: 'task-1', status: 'pending' }] })).toBe(
      'todo-write: task-1 cannot be moved to pending while task-2 (in_progress) depends on it\nNothing was changed.',
    );
  });

  it('reports every offending dependency at once', () => {
    const graph = frozen([task('a', 'a'), task('b', 'b'), task('c', 'c')]);
    expect(
      rejected(graph, { merge: true, todos: [{ id: 'c', status: 'completed', dependencies: ['a', 'b'] }] }),
    ).toBe(
      [
        'todo-write: c cannot be completed while its dependency a is pending',
        'todo-write: c cannot be completed while its dependency b is pending',
        'Nothing was changed.',
      ].join('\n'),
    );
  });
});

describe('argument validation', () => {
  it('names the field and the accepted statuses', () => {
    expect(
      rejected([], { todos: [{ content: 'a' }, { content: 'b' }, { content: 'c', status: 'done' }] }),
    ).toBe(
      'todo-write: todos[2].status must be one of pending, in_progress, completed, blocked, cancelled (got "done")\nNothing was changed.',
    );
  });

  it('reports every problem of a call at once', () => {
    expect(
      rejected(PLAN, { todos: [{ status: 'done', id: 'a b', content: '' }, 3], merge: 'yes', bogus: 1 }),
    ).toBe(
      [
        'todo-write: unknown field "bogus" (expected todos, merge, delete, clear_completed)',
        'todo-write: merge must be true or false (got "yes")',
        'todo-write: todos[0].id must be 1-64 letters, digits or . _ : / - starting with a letter or digit (got "a b")',
        'todo-write: todos[0].content must be a non-empty string (got "")',
        'todo-write: todos[0].status must be one of pending, in_progress, completed, blocked, cancelled (got "done")',
        'todo-write: todos[1] must be an object with content and optionally id, status, dependencies',
        'Nothing was changed.',
      ].join('\n'),
    );
  });

  it.each([
    [
      'a string that is not JSON',
      '{todos',
      'todo-write: arguments must be a JSON object; got a string that is not valid JSON',
    ],
    [
      'an array',
      [1],
      'todo-write: arguments must be an object with todos, merge, delete or clear_completed (got [1])',
    ],
    [
      'todos that is not a list',
      { todos: { content: 'a' } },
      'todo-write: todos must be an array of tasks (got {"content":"a"})',
    ],
    [
      'a non-boolean clear_completed',
      { clear_completed: 1 },
      'todo-write: clear_completed must be true or false (got 1)',
    ],
    ['a delete that is not a list', { delete: 5 }, 'todo-write: delete must be an array of task ids (got 5)'],
    [
      'an empty id in delete',
      { delete: ['task-1', ''] },
      'todo-write: delete[1] must be a non-empty task id string (got "")',
    ],
    [
      'dependencies that are not a list',
      { todos: [{ content: 'a', dependencies: 7 }] },
      'todo-write: todos[0].dependencies must be an array of task ids (got 7)',
    ],
    [
      'a numeric dependency',
      { todos: [{ content: 'a', dependencies: [1] }] },
      'todo-write: todos[0].dependencies[0] must be a non-empty task id string (got 1)',
    ],
    [
      'a numeric id',
      { todos: [{ id: 3, content: 'a' }] },
      'todo-write: todos[0].id must be 1-64 letters, digits or . _ : / - starting with a letter or digit (got 3)',
    ],
    [
      'content that is not text',
      { todos: [{ content: ['a'] }] },
      'todo-write: todos[0].content must be a non-empty string (got ["a"])',
    ],
    [
      'one id written twice',
      {
        todos: [
          { id: 'x', content: 'a' },
          { id: 'y', content: 'b' },
          { id: 'x', content: 'c' },
        ],
      },
      'todo-write: todos[2].id "x" repeats todos[0].id',
    ],
  ])('rejects %s', (_label, args, error) => {
    expect(rejected(PLAN, args)).toBe(`${error}\nNothing was changed.`);
  });

  it('caps the content length', () => {
    expect(rejected([], { todos: [{ content: 'x'.repeat(MAX_TASK_CONTENT_CHARS + 1) }] })).toBe(
      `todo-write: todos[0].content must be at most ${MAX_TASK_CONTENT_CHARS} characters (got ${MAX_TASK_CONTENT_CHARS + 1})\nNothing was changed.`,
    );
  });

  it('caps the number of tasks', () => {
    const todos = Array.from({ length: MAX_TASKS + 1 }, (_, index) => ({ content: `step ${index}` }));
    expect(rejected([], { todos })).toBe(
      `todo-write: the list would hold ${MAX_TASKS + 1} tasks; at most ${MAX_TASKS} are allowed\nNothing was changed.`,
    );
    expect(ok([], { todos: todos.slice(1) }).graph).toHaveLength(MAX_TASKS);
  });

  it('caps the bytes the whole list takes in the goal state, naming the limit', () => {
    const long = Array.from({ length: 40 }, (_, index) => ({
      content: `${index} ${'x'.repeat(MAX_TASK_CONTENT_CHARS - 10)}`,
    }));
    const error = rejected([], { todos: long });
    expect(error).toMatch(new RegExp(`at most ${MAX_TASK_GRAPH_BYTES} are kept in the goal's state`));
    expect(error).toMatch(/clear_completed/);
    expect(ok([], { todos: long.slice(0, 7) }).graph).toHaveLength(7);
  });

  it('accepts arguments as a JSON string, and todos double-encoded as one', () => {
    const json = ok([], JSON.stringify({ todos: [{ content: 'a' }] }));
    expect(json.graph).toEqual([task('task-1', 'a')]);
    const nested = ok([], { todos: JSON.stringify([{ content: 'a', dependencies: '[]' }]) });
    expect(nested.graph).toEqual([task('task-1', 'a')]);
  });

  it('treats null optional fields as left out', () => {
    const outcome = ok(PLAN, {
      merge: true,
      todos: [{ id: 'task-4', content: null, status: 'completed', dependencies: null }],
      delete: null,
      clear_completed: null,
    });
    expect(outcome.graph[3]).toEqual(task('task-4', 'Docs', 'completed'));
  });

  it('trims ids and content, and removes repeated dependencies', () => {
    const outcome = ok(PLAN, {
      merge: true,
      todos: [{ id: ' extra ', content: '  Tidy up  ', dependencies: ['task-1', ' task-1 '] }],
    });
    expect(outcome.graph[4]).toEqual(task('extra', 'Tidy up', 'pending', ['task-1']));
  });

  it('ignores unknown task fields with a note', () => {
    const outcome = ok([], {
      todos: [
        { content: 'a', activeForm: 'Doing a', priority: 'high' },
        { content: 'b', priority: 1 },
      ],
    });
    expect(outcome.graph).toEqual([task('task-1', 'a'), task('task-2', 'b')]);
    expect(outcome.notes).toEqual([
      'ignored unknown task fields: activeForm, priority (a task has id, content, status, dependencies)',
    ]);
  });
});

describe('sub-agent mode', () => {
  it('merges a full replace instead of wiping the list', () => {
    const outcome = ok(PLAN, { todos: [{ content: 'Worker step' }] }, true);
    expect(ids(outcome.graph)).toEqual(['task-1', 'task-2', 'task-3', 'task-4', 'task-5']);
    expect(outcome.notes).toEqual(['sub-agent: todos were merged into the list, not replacing it']);
  });

  it('updates the stored task with exactly the same content instead of adding a copy', () => {
    const outcome = ok(PLAN, { todos: [{ content: 'Docs', status: 'in_progress' }] }, true);
    expect(outcome.graph).toEqual([...PLAN.slice(0, 3), task('task-4', 'Docs', 'in_progress')]);
  });

  it('leaves the list as it was when a worker rewrites its whole list unchanged', () => {
    const list = {
      todos: [{ content: 'Fetch' }, { content: 'Parse', dependencies: ['task-5'] }, { content: 'Fetch' }],
    };
    const first = ok(PLAN, list, true);
    expect(first.graph.slice(4)).toEqual([
      task('task-5', 'Fetch'),
      task('task-6', 'Parse', 'pending', ['task-5']),
      task('task-7', 'Fetch'),
    ]);
    const second = ok(first.graph, list, true);
    expect(second.changed).toBe(false);
    expect(second.graph).toBe(first.graph);
  });

  it('does not match content against a task the call addresses by id', () => {
    const outcome = ok(PLAN, { todos: [{ id: 'task-4', content: 'Guide' }, { content: 'Docs' }] }, true);
    expect(outcome.graph.slice(3)).toEqual([task('task-4', 'Guide'), task('task-5', 'Docs')]);
  });

  it('matches content in an explicit merge too', () => {
    const outcome = ok(PLAN, { merge: true, todos: [{ content: 'Docs', status: 'completed' }] }, true);
    expect(outcome.graph).toHaveLength(4);
    expect(outcome.notes).toEqual([]);
  });

  it('changes nothing with an empty todos', () => {
    const outcome = ok(PLAN, { todos: [] }, true);
    expect(outcome.graph).toBe(PLAN);
    expect(outcome.changed).toBe(false);
  });

  it('may still delete tasks by id', () => {
    expect(ids(ok(PLAN, { delete: ['task-4'] }, true).graph)).toEqual(['task-1', 'task-2', 'task-3']);
  });
});

describe('rendering', () => {
  const view = taskView([
    ...PLAN,
    task('task-5', 'Old *idea*\nwith `code`', 'cancelled'),
    task('task-6', 'Waiting on vendor', 'blocked'),
  ]);

  it('draws one compact line per task', () => {
    expect(renderTaskList(view)).toBe(
      [
        '[x] task-1 Write the parser',
        '[>] task-2 Add tests (depends on task-1)',
        '[ ] task-3 Ship it (depends on task-2; blocked by task-2)',
        '[ ] task-4 Docs (ready)',
        '[-] task-5 Old *idea* with `code`',
        '[!] task-6 Waiting on vendor',
      ].join('\n'),
    );
    expect(renderTaskList([])).toBe('No tasks.');
  });

  it('summarizes the counts and the ready tasks', () => {
    expect(summarizeTaskList(view)).toBe(
      '6 tasks: 2 pending, 1 in progress, 1 completed, 1 blocked, 1 cancelled. Ready: task-4.',
    );
    expect(summarizeTaskList(taskView([task('a', 'a', 'completed')]))).toBe('1 task: 1 completed.');
  });

  it('renders Markdown for the Web UI, escaping the content', () => {
    expect(renderTasksMarkdown(view)).toBe(
      [
        '**Tasks** — 1 of 6 completed',
        '',
        '- [x] `task-1` Write the parser',
        '- [ ] `task-2` Add tests — _in progress_',
        '- [ ] `task-3` Ship it — blocked by `task-2`',
        '- [ ] `task-4` Docs — _ready_',
        '- [ ] ~~`task-5` Old \\*idea\\* with \\`code\\`~~ — _cancelled_',
        '- [ ] `task-6` Waiting on vendor — _blocked_',
      ].join('\n'),
    );
    expect(renderTasksMarkdown([])).toBe('_No tasks._');
  });
});
