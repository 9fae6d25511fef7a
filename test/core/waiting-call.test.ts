import { describe, expect, it } from 'vitest';
import { isWaitingCall, sleepSecondsOf, WAITING_CALL_MIN_SECONDS } from '../../core/waiting-call';

describe('a call that waited on purpose', () => {
  it('adds up the sleeps a command names, with their units', () => {
    expect(sleepSecondsOf('sleep 30 && curl -s localhost')).toBe(30);
    expect(sleepSecondsOf('sleep 5; make; sleep 5')).toBe(10);
    expect(sleepSecondsOf('sleep 1m')).toBe(60);
    expect(sleepSecondsOf('sleep 0.5h')).toBe(1800);
    expect(sleepSecondsOf('(sleep 12)')).toBe(12);
    expect(sleepSecondsOf('ls -1')).toBe(0);
    // A word that only contains "sleep" is not a sleep.
    expect(sleepSecondsOf('cat sleep30.txt; ./nosleep 40; grep sleep x')).toBe(0);
  });

  it('is a job-output that asks to wait 10 s or more', () => {
    expect(isWaitingCall('job-output', { job_id: 'job-1', wait_seconds: 10 })).toBe(true);
    expect(isWaitingCall('job-output', { job_id: 'job-1', wait_seconds: 9 })).toBe(false);
    expect(isWaitingCall('job-output', { job_id: 'job-1' })).toBe(false);
    expect(isWaitingCall('job-output', { job_id: 'job-1', wait_seconds: '30' })).toBe(false);
  });

  it('is a bash command that sleeps 10 s or more; nothing else waits', () => {
    expect(WAITING_CALL_MIN_SECONDS).toBe(10);
    expect(isWaitingCall('bash', { command: 'sleep 10; gh run view 1' })).toBe(true);
    expect(isWaitingCall('bash', { command: 'sleep 9; gh run view 1' })).toBe(false);
    expect(isWaitingCall('bash', { command: 'sleep 3m' })).toBe(true);
    expect(isWaitingCall('read', { command: 'sleep 30' })).toBe(false);
    expect(isWaitingCall('bash', { job_id: 'job-1' })).toBe(false);
    expect(isWaitingCall('bash', null)).toBe(false);
  });
});
