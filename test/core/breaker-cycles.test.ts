import { describe, expect, it } from 'vitest';
import {
  type AnsweredCall,
  afterAnsweredCall,
  answeredWorkflowCall,
  REPEATS_AFTER_WARNING,
} from '../../core/breaker-cycles';
import {
  type BreakerSettings,
  type BreakerState,
  breakerSettings,
  DEFAULT_WAIT_LIMIT,
  INITIAL_BREAKER,
  restartCounts,
} from '../../core/runaway-breaker';

const ls: AnsweredCall = { summary: 'bash: ls -1', call: 'c-ls', output: 'o-ls', waited: false };

/** Runs the calls through the rule: what it warned and tripped, by call number (1-based). */
function run(
  calls: AnsweredCall[],
  settings: BreakerSettings = breakerSettings(undefined),
  from = INITIAL_BREAKER,
) {
  let state: BreakerState = from;
  const warnings: Array<[number, string]> = [];
  const trips: Array<[number, string]> = [];
  calls.forEach((call, index) => {
    const outcome = afterAnsweredCall(state, settings, call);
    state = outcome.state;
    if (outcome.warning) warnings.push([index + 1, outcome.warning]);
    if (outcome.trip) trips.push([index + 1, outcome.trip]);
  });
  return { state, warnings, trips };
}

const times = (n: number, call: AnsweredCall) => Array.from({ length: n }, () => call);

describe('the repeat rule: a warning, then a pause', () => {
  it('warns at the fifth identical call and result, and pauses only after three more', () => {
    expect(REPEATS_AFTER_WARNING).toBe(3);
    const { warnings, trips, state } = run(times(8, ls));
    expect(warnings.map(([at]) => at)).toEqual([5]);
    expect(warnings[0][1]).toContain('the same bash call `ls -1` returned the same result 5 times in a row');
    expect(warnings[0][1]).toContain('call finish with status "blocked"');
    expect(warnings[0][1]).toContain('run_in_background');
    expect(warnings[0][1]).toContain('job-output and wait_seconds');
    expect(trips).toEqual([
      [8, 'the same bash call `ls -1` returned the same output 8 times in a row, after a warning at 5'],
    ]);
    expect(state.tripped).toBe(trips[0][1]);
    expect(run(times(7, ls)).trips).toEqual([]);
  });

  it('starts over when the repetition breaks: a new one is warned about again', () => {
    const other = { ...ls, output: 'changed' };
    const { warnings, trips } = run([...times(6, ls), other, ...times(6, ls)]);
    expect(warnings.map(([at]) => at)).toEqual([5, 12]);
    expect(trips).toEqual([]);
  });

  it('never counts the same command with a changing output', () => {
    const outputs = ['3 failed', '2 failed', '2 failed', '1 failed', '1 failed', 'ok', 'ok', 'ok', 'ok'];
    const calls = outputs.map((output) => ({ ...ls, summary: 'bash: npm test', call: 'test', output }));
    expect(run(calls)).toMatchObject({ warnings: [], trips: [] });
  });

  it('finds short cycles: A B A B … and A B C A B C …', () => {
    const b = { summary: 'bash: cat a', call: 'c-cat', output: 'o-cat', waited: false };
    const c = { summary: 'read: b', call: 'c-read', output: 'o-read', waited: false };
    const pairs = Array.from({ length: 8 }, () => [ls, b]).flat();
    const two = run(pairs);
    // Five times round the cycle is the tenth call; three more rounds, the sixteenth.
    expect(two.warnings.map(([at]) => at)).toEqual([10]);
    expect(two.warnings[0][1]).toContain('the same cycle of 2 calls (bash call `ls -1`, bash call `cat a`)');
    expect(two.trips.map(([at]) => at)).toEqual([16]);
    const three = run(Array.from({ length: 8 }, () => [ls, b, c]).flat());
    expect(three.warnings.map(([at]) => at)).toEqual([15]);
    expect(three.trips.map(([at]) => at)).toEqual([24]);
    // A cycle of four is not one (it is more likely honest work).
    const d = { ...c, call: 'c-d' };
    expect(run(Array.from({ length: 10 }, () => [ls, b, c, d]).flat()).warnings).toEqual([]);
  });

  it('gives calls that waited the higher wait limit', () => {
    const poll = { summary: 'bash: sleep 30; gh run view', call: 'c-poll', output: 'pending', waited: true };
    expect(DEFAULT_WAIT_LIMIT).toBe(20);
    const { warnings, trips } = run(times(23, poll));
    expect(warnings.map(([at]) => at)).toEqual([20]);
    expect(warnings[0][1]).toContain('even with waiting');
    expect(trips).toEqual([
      [
        23,
        'the same bash call `sleep 30; gh run view` returned the same output 23 times in a row (calls that waited), after a warning at 20',
      ],
    ]);
    // A cycle with a call that waited waits too.
    const mixed = run(Array.from({ length: 12 }, () => [poll, ls]).flat());
    expect(mixed.warnings).toEqual([]);
  });

  it('turns off with a limit of 0, each limit on its own', () => {
    const poll = { ...ls, waited: true };
    expect(run(times(30, ls), breakerSettings({ repeatLimit: 0 })).warnings).toEqual([]);
    expect(run(times(30, poll), breakerSettings({ waitLimit: 0 })).warnings).toEqual([]);
    expect(run(times(30, ls), breakerSettings({ waitLimit: 0 })).trips[0][0]).toBe(8);
    // A goal started before wait_limit existed has none in its settings: the default applies.
    expect(run(times(20, poll), { repeatLimit: 5, idleTurns: 3, windowMs: 60_000 }).warnings.length).toBe(1);
  });

  it('starts counting afresh after a person looked, keeping the trip reason for the unpause note', () => {
    const warned = run(times(6, ls)).state;
    const fresh = restartCounts(warned);
    expect(fresh).toEqual({ ...INITIAL_BREAKER, recent: warned.recent, tripped: null });
    expect(run(times(4, ls), undefined, fresh).warnings).toEqual([]);
    expect(run(times(5, ls), undefined, fresh).warnings.length).toBe(1);
    expect(restartCounts({ ...warned, tripped: 'why' }).tripped).toBe('why');
  });
});

describe('workflow tools in the repeat rule', () => {
  const finish = (summary: string) =>
    ({ tool: 'finish', parsed: { ok: true, args: { status: 'complete', summary } } }) as const;

  it('makes a finish vetoed the same way a repeat, however its summary is worded', () => {
    const veto = '[a stop hook kept the goal going; it is not finished] tests fail';
    const a = answeredWorkflowCall('finish', finish('done'), veto);
    const b = answeredWorkflowCall('finish', finish('really done now'), veto);
    expect(b).toEqual(a);
    expect(a.summary).toBe('finish: complete');
    expect(answeredWorkflowCall('finish', finish('done'), `${veto}!`)).not.toEqual(a);
    const calls = [a, b, a, b, a];
    expect(run(calls).warnings[0][1]).toContain(
      'the same finish call `complete` returned the same result 5 times',
    );
  });

  it('tells todo-write calls apart by their arguments', () => {
    const write = (id: string) =>
      ({
        tool: 'todo-write',
        parsed: { ok: true, todos: [{ id, content: id, status: 'pending' }] },
      }) as never;
    expect(answeredWorkflowCall('todo-write', write('a'), 'ok')).toEqual(
      answeredWorkflowCall('todo-write', write('a'), 'ok'),
    );
    expect(answeredWorkflowCall('todo-write', write('a'), 'ok').call).not.toBe(
      answeredWorkflowCall('todo-write', write('b'), 'ok').call,
    );
  });
});
