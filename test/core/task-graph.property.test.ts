import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  applyTodoWrite,
  dependencyOrder,
  TASK_STATUSES,
  type TaskGraph,
  type TodoWriteOutcome,
  taskView,
} from '../../core/task-graph';
import { parseTodoWriteArgs } from '../../core/todo-write-schema';

/** A small id pool, so calls keep hitting the same tasks; `ghost` is never a task. */
const ID_POOL = ['task-1', 'task-2', 'task-3', 'task-4', 'task-5', 'a', 'b'];
const CONTENTS = ['alpha', 'beta', 'gamma', 'delta'];
const RUNS = 300;
const MAX_CALLS = 20;

const absentOr = <T>(arb: fc.Arbitrary<T>, freq = 2) => fc.option(arb, { nil: undefined, freq });

// Pending and completed are favoured so that plenty of calls pass the dependency rules.
const statusArb = fc.oneof(
  { weight: 3, arbitrary: fc.constant('pending' as const) },
  { weight: 2, arbitrary: fc.constant('completed' as const) },
  { weight: 3, arbitrary: fc.constantFrom(...TASK_STATUSES) },
);

const depsArb = fc.array(fc.constantFrom(...ID_POOL, 'ghost'), { maxLength: 3 });

const todoArb = fc.record(
  {
    id: absentOr(fc.constantFrom(...ID_POOL)),
    content: absentOr(fc.constantFrom(...CONTENTS), 4),
    status: absentOr(statusArb),
    dependencies: absentOr(depsArb),
  },
  { requiredKeys: [] },
);

/** Repeated ids in one call are always rejected; keep them to the malformed calls. */
function uniqueIds<T extends { id?: string }>(todos: T[]): T[] {
  const seen = new Set<string>();
  return todos.map((todo) => {
    if (todo.id === undefined) return todo;
    if (seen.has(todo.id)) return { ...todo, id: undefined };
    seen.add(todo.id);
    return todo;
  });
}

const todosArb = fc.array(todoArb, { minLength: 1, maxLength: 5 }).map(uniqueIds);

/** Tasks written whole, as a full replace needs them. */
const wholeTodosArb = fc
  .array(
    fc.record(
      {
        id: absentOr(fc.constantFrom(...ID_POOL)),
        content: fc.constantFrom(...CONTENTS),
        status: absentOr(statusArb),
        dependencies: absentOr(depsArb),
      },
      { requiredKeys: ['content'] },
    ),
    { maxLength: 6 },
  )
  .map(uniqueIds);

const idsArb = fc.array(fc.constantFrom(...ID_POOL, 'ghost'), { minLength: 1, maxLength: 2 });

/** Moves one task along, as a model working through its plan does. */
const progressArb = fc
  .record({
    id: fc.constantFrom(...ID_POOL),
    status: fc.constantFrom(
      'in_progress' as const,
      'completed' as const,
      'completed' as const,
      'cancelled' as const,
    ),
  })
  .map((todo) => ({ merge: true, todos: [todo] }));

/** Every kind of call, plus arbitrary mixes of the fields. */
const wellFormedArb = fc.oneof(
  { weight: 3, arbitrary: wholeTodosArb.map((todos) => ({ todos })) },
  { weight: 6, arbitrary: todosArb.map((todos) => ({ todos, merge: true })) },
  { weight: 5, arbitrary: progressArb },
  { weight: 2, arbitrary: idsArb.map((ids) => ({ delete: ids })) },
  { weight: 1, arbitrary: fc.constant({ clear_completed: true }) },
  { weight: 1, arbitrary: fc.constant({}) },
  {
    weight: 3,
    arbitrary: fc.record(
      {
        todos: absentOr(todosArb),
        merge: absentOr(fc.boolean()),
        delete: absentOr(idsArb),
        clear_completed: absentOr(fc.boolean()),
      },
      { requiredKeys: [] },
    ),
  },
);

const malformedArb = fc.constantFrom<unknown>(
  '{not json',
  [1],
  42,
  { bogus: true },
  { merge: 'yes' },
  { todos: [{ content: 'x', status: 'done' }] },
  {
    todos: [
      { id: 'a', content: 'x' },
      { id: 'a', content: 'y' },
    ],
  },
  { delete: [''] },
);

const argsArb = fc.oneof(
  { weight: 8, arbitrary: wellFormedArb as fc.Arbitrary<unknown> },
  { weight: 2, arbitrary: wellFormedArb.map((args) => JSON.stringify(args) as unknown) },
  { weight: 1, arbitrary: malformedArb },
);

/** Validates the model's raw arguments, as the model step does, and applies them, as the workflow does. */
const apply = (graph: TaskGraph, args: unknown, subAgent = false): TodoWriteOutcome =>
  applyTodoWrite(graph, parseTodoWriteArgs(args), { subAgent });

interface Call {
  args: unknown;
  subAgent: boolean;
}

const callsArb = fc.array(fc.record({ args: argsArb, subAgent: fc.boolean() }), {
  minLength: 1,
  maxLength: MAX_CALLS,
  size: 'medium',
});

/** Runs the calls from an empty list, returning every outcome. */
function replay(calls: Call[], start: TaskGraph = []): TodoWriteOutcome[] {
  let graph = start;
  return calls.map((call) => {
    const outcome = apply(graph, call.args, call.subAgent);
    graph = outcome.graph;
    return outcome;
  });
}

const FINISHED = new Set(['completed', 'cancelled']);

/** Checks every invariant of a stored graph, independently of the module's own helpers. */
function expectValidGraph(graph: TaskGraph): void {
  const ids = graph.map((task) => task.id);
  expect(new Set(ids).size).toBe(ids.length);
  const byId = new Map(graph.map((task) => [task.id, task]));
  for (const task of graph) {
    expect(task.content.trim()).not.toBe('');
    expect(TASK_STATUSES).toContain(task.status);
    for (const dep of task.dependencies) {
      expect(byId.has(dep), `${task.id} -> ${dep} dangles`).toBe(true);
      if (task.status === 'in_progress' || task.status === 'completed') {
        expect(FINISHED.has(byId.get(dep)!.status), `${task.id} started before ${dep}`).toBe(true);
      }
    }
  }
  // Peel off tasks whose dependencies are all peeled; anything left over sits on a cycle.
  const peeled = new Set<string>();
  let progress = true;
  while (progress) {
    progress = false;
    for (const task of graph) {
      if (!peeled.has(task.id) && task.dependencies.every((dep) => peeled.has(dep))) {
        peeled.add(task.id);
        progress = true;
      }
    }
  }
  expect(peeled.size, 'the graph holds a cycle').toBe(graph.length);
}

/** The view holds exactly the graph's tasks, in a topological order, with correct derived fields. */
function expectValidView(outcome: TodoWriteOutcome): void {
  const { graph, view } = outcome;
  expect([...view.map((task) => task.id)].sort()).toEqual([...graph.map((task) => task.id)].sort());
  const seen = new Set<string>();
  const byId = new Map(graph.map((task) => [task.id, task]));
  for (const task of view) {
    for (const dep of task.dependencies) expect(seen.has(dep), `${dep} listed after ${task.id}`).toBe(true);
    seen.add(task.id);
    const unfinished = task.dependencies.filter((dep) => !FINISHED.has(byId.get(dep)!.status));
    expect(task.blocked_by).toEqual(unfinished);
    expect(task.ready).toBe(task.status === 'pending' && unfinished.length === 0);
  }
}

describe('task graph properties', () => {
  it('keeps every invariant after any sequence of calls', () => {
    fc.assert(
      fc.property(callsArb, (calls) => {
        let before: TaskGraph = [];
        for (const [index, outcome] of replay(calls, before).entries()) {
          expectValidGraph(outcome.graph);
          expectValidView(outcome);
          expect(JSON.parse(JSON.stringify(outcome.graph))).toEqual(outcome.graph);
          if (!outcome.ok) {
            expect(outcome.graph).toBe(before);
            expect(outcome.changed).toBe(false);
            expect(outcome.result.startsWith('todo-write: ')).toBe(true);
            expect(outcome.result.endsWith('\nNothing was changed.')).toBe(true);
          } else {
            expect(outcome.changed).toBe(JSON.stringify(before) !== JSON.stringify(outcome.graph));
          }
          const call = calls[index];
          const args = typeof call.args === 'string' ? safeParse(call.args) : call.args;
          if (isRecord(args) && !hasValue(args.delete) && args.clear_completed !== true) {
            // Without delete or clear_completed nothing may disappear: a sub-agent never wipes the list,
            // and for anyone else only a full replace may.
            const kept = new Set(outcome.graph.map((task) => task.id));
            const mayDrop = !call.subAgent && hasValue(args.todos) && args.merge !== true;
            if (!mayDrop) for (const task of before) expect(kept.has(task.id)).toBe(true);
          }
          before = outcome.graph;
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('gives the same graphs and texts when the same calls are replayed', () => {
    fc.assert(
      fc.property(callsArb, (calls) => {
        expect(replay(calls)).toEqual(replay(calls));
      }),
      { numRuns: RUNS },
    );
  });

  it('keeps insertion order among tasks that do not depend on each other', () => {
    fc.assert(
      fc.property(callsArb, (calls) => {
        const outcomes = replay(calls);
        const graph = outcomes[outcomes.length - 1].graph;
        const flat = graph.map((task) => ({ ...task, dependencies: [] }));
        expect(dependencyOrder(flat).map((task) => task.id)).toEqual(graph.map((task) => task.id));
        expect(taskView(graph)).toEqual(outcomes[outcomes.length - 1].view);
      }),
      { numRuns: RUNS },
    );
  });

  it('keeps stored values of fields a merge leaves out', () => {
    fc.assert(
      fc.property(callsArb, fc.array(todoArb, { minLength: 1, maxLength: 4 }), (calls, todos) => {
        const outcomes = replay(calls);
        const before = outcomes[outcomes.length - 1].graph;
        const outcome = apply(before, { merge: true, todos });
        if (!outcome.ok) return;
        for (const todo of todos) {
          const stored = before.find((task) => task.id === todo.id);
          if (todo.id === undefined || stored === undefined) continue;
          const after = outcome.graph.find((task) => task.id === todo.id)!;
          if (todo.content === undefined) expect(after.content).toBe(stored.content);
          if (todo.status === undefined) expect(after.status).toBe(stored.status);
          if (todo.dependencies === undefined) expect(after.dependencies).toEqual(stored.dependencies);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('accepts a move to in_progress or completed exactly when every dependency is finished', () => {
    const planArb = fc.integer({ min: 2, max: 8 }).chain((size) =>
      fc.tuple(
        fc.tuple(
          ...Array.from({ length: size }, (_, index) =>
            fc.subarray(Array.from({ length: index }, (_, dep) => dep)),
          ),
        ),
        fc.array(
          fc.record({
            index: fc.nat({ max: size - 1 }),
            status: fc.constantFrom(...TASK_STATUSES),
          }),
          { maxLength: 3 * size },
        ),
      ),
    );
    fc.assert(
      fc.property(planArb, fc.boolean(), ([deps, moves], subAgent) => {
        const todos = deps.map((earlier, index) => ({
          content: `step ${index}`,
          dependencies: earlier.map((dep) => `task-${dep + 1}`),
        }));
        let graph = apply([], { todos }).graph;
        for (const move of moves) {
          const id = `task-${move.index + 1}`;
          const target = graph.find((task) => task.id === id)!;
          const depsFinished = target.dependencies.every((dep) =>
            FINISHED.has(graph.find((task) => task.id === dep)!.status),
          );
          const dependentsStarted = graph.some(
            (task) =>
              task.dependencies.includes(id) &&
              (task.status === 'in_progress' || task.status === 'completed'),
          );
          const gated = move.status === 'in_progress' || move.status === 'completed';
          const allowed = (!gated || depsFinished) && (FINISHED.has(move.status) || !dependentsStarted);
          const outcome = apply(graph, { merge: true, todos: [{ id, status: move.status }] }, subAgent);
          expect(outcome.ok, outcome.result).toBe(allowed);
          expectValidGraph(outcome.graph);
          graph = outcome.graph;
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('accepts a fair share of the generated calls', () => {
    const outcomes = fc.sample(callsArb, { numRuns: 100, seed: 7 }).flatMap((calls) => replay(calls));
    const accepted = outcomes.filter((outcome) => outcome.ok && outcome.changed).length;
    // Guards the generators: invariants checked only on rejected calls would prove little.
    expect(accepted / outcomes.length).toBeGreaterThan(0.15);
  });
});

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function hasValue(value: unknown): boolean {
  return value !== undefined && value !== null;
}

function safeParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
