/** Issue 27 §1: the rules of a goal's checks, pure: merged without loss, failed closed, told plainly. */
import { describe, expect, it } from 'vitest';
import {
  type CheckOutcome,
  checksBlockedReason,
  checksFailedText,
  checksPassed,
  checksProblem,
  droppedParts,
  mergeChecks,
  narrowedText,
  outputTail,
  signOffRequest,
  VERIFY_MAX_CHECKS,
  VERIFY_TAIL_MAX_CHARS,
} from '../../core/verify';

const passed: CheckOutcome = { command: 'npm test', exitCode: 0, ok: true, spool: 'spool:1', tail: 'ok' };
const failed: CheckOutcome = {
  command: 'npm run lint',
  exitCode: 1,
  ok: false,
  spool: 'spool:2',
  tail: 'line 1\nerror: unused variable',
};
const timedOut: CheckOutcome = {
  command: 'sleep 99',
  exitCode: null,
  ok: false,
  problem: 'timed out after 2 s',
  tail: '',
};

describe('verify', () => {
  it('merges checks in order, the first list first, without blanks or duplicates', () => {
    expect(mergeChecks(['npm test', ' npm test '], undefined, ['', 'make', 'npm test'])).toEqual([
      'npm test',
      'make',
    ]);
  });

  it('passes only when every declared check ran and exited 0', () => {
    expect(checksPassed([passed], 1)).toBe(true);
    expect(checksPassed([passed, failed], 2)).toBe(false);
    expect(checksPassed([passed, timedOut], 2)).toBe(false);
    // A run that came back short (or empty) has not passed the checks it did not run.
    expect(checksPassed([passed], 2)).toBe(false);
    expect(checksPassed([], 0)).toBe(false);
  });

  it('tells the model which check failed, how, where its output is, and how many tries are left', () => {
    const text = checksFailedText([passed, failed, timedOut], 1, 3);
    expect(text).toContain('failed finish 1 of 3; after 2 more failed finishes the goal ends blocked');
    expect(text).toContain('passed: npm test (exit 0) spool:1');
    expect(text).toContain('FAILED: npm run lint (exit 1) spool:2');
    expect(text).toContain('FAILED: sleep 99 (timed out after 2 s)');
    expect(text).toContain('error: unused variable');
    expect(text).toContain('tool-output {"id":"spool:2"}');
    expect(checksFailedText([failed], 3, 3)).toContain('failed finish 3 of 3; the goal ends blocked');
  });

  it('gives a blocked goal the failed checks and the end of their output as its reason', () => {
    expect(checksBlockedReason([passed, failed], 3)).toBe(
      'checks failed at 3 finishes: npm run lint (exit 1, spool:2): line 1 | error: unused variable',
    );
  });

  it('refuses too many or too long checks, and keeps only the end of an output', () => {
    expect(checksProblem(['a'])).toBeNull();
    expect(checksProblem(Array.from({ length: VERIFY_MAX_CHECKS + 1 }, (_, i) => `c${i}`))).toContain(
      `at most ${VERIFY_MAX_CHECKS}`,
    );
    expect(checksProblem(['x'.repeat(5000)])).toContain('put it in a script');
    const tail = outputTail(`${'a'.repeat(5000)}END\n\n`);
    expect(tail.endsWith('END')).toBe(true);
    expect(tail.length).toBe(VERIFY_TAIL_MAX_CHARS + 1);
  });

  it('a claim that leaves out a part named before narrows the objective; case and spacing do not', () => {
    expect(droppedParts(['Fix the bug', 'add a test'], ['fix  the BUG', 'add a test', 'docs'])).toEqual([]);
    expect(droppedParts(['Fix the bug', 'add a test'], ['fix the bug'])).toEqual(['add a test']);
    const text = narrowedText('fix the bug and add a test', ['Fix the bug', 'add a test'], ['add a test']);
    expect(text).toContain('The objective stays what the user wrote: fix the bug and add a test');
    expect(text).toContain('This finish leaves out: add a test');
  });

  it('asks a sign-off with the claim, its parts and the checks as evidence', () => {
    const request = signOffRequest(['looks right'], 'it is blue', [passed], ['paint it']);
    expect(request.command).toBe('sign-off: looks right');
    expect(request.justification).toBe(
      'the model says: it is blue\nit claims: paint it\npassed: npm test (exit 0) spool:1',
    );
  });
});
