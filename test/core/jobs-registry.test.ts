import { describe, expect, it } from 'vitest';
import {
  addJob,
  JOBS_KEPT,
  type JobRecord,
  markJobs,
  nextJobId,
  renderJobs,
  runningJobsByProcess,
  withGoneHosts,
} from '../../core/jobs-registry';

const job = (n: number, extra: Partial<JobRecord> = {}): JobRecord => ({
  jobId: `job-${n}`,
  command: `sleep ${n}`,
  status: 'running',
  startedAtMs: 1_000 * n,
  processQueue: 'q-a',
  ...extra,
});

describe('the jobs registry', () => {
  it('numbers jobs one past the highest id, even after gaps', () => {
    expect(nextJobId([])).toBe('job-1');
    expect(nextJobId([job(1), job(7, { status: 'exited' }), job(3)])).toBe('job-8');
  });

  it('marks only running jobs, by id or all of them', () => {
    const jobs = [job(1), job(2, { status: 'exited', exitCode: 0 }), job(3)];
    expect(markJobs(jobs, ['job-1'], 'killed').map((j) => j.status)).toEqual(['killed', 'exited', 'running']);
    const all = markJobs(jobs, 'all', 'lost');
    expect(all.map((j) => j.status)).toEqual(['lost', 'exited', 'lost']);
    // An exited job keeps its exit code and status.
    expect(all[1]).toEqual(jobs[1]);
  });

  it('groups running jobs by the process that holds them', () => {
    const jobs = [job(1), job(2, { processQueue: 'q-b' }), job(3), job(4, { status: 'killed' })];
    expect([...runningJobsByProcess(jobs)]).toEqual([
      ['q-a', ['job-1', 'job-3']],
      ['q-b', ['job-2']],
    ]);
  });

  it('keeps at most JOBS_KEPT jobs, dropping finished ones first', () => {
    let jobs: JobRecord[] = [job(1)];
    for (let n = 2; n <= JOBS_KEPT + 5; n++)
      jobs = addJob(jobs, job(n, { status: n % 2 ? 'running' : 'exited' }));
    expect(jobs).toHaveLength(JOBS_KEPT);
    expect(jobs.some((j) => j.jobId === 'job-1')).toBe(true);
    expect(jobs.some((j) => j.jobId === 'job-2')).toBe(false);
  });

  it('lists jobs as the spec shows them', () => {
    const text = renderJobs([job(1), job(2, { status: 'exited', exitCode: 3 })], 1_000 + 323_000);
    expect(text).toContain('- job-1 [running] sleep 1 (started 5m23s ago)');
    expect(text).toContain('- job-2 [exited 3] sleep 2');
    expect(renderJobs([], 0)).toBe('no background jobs');
  });

  it('shows the running jobs of a gone host as lost, and leaves the others and finished jobs alone', () => {
    const jobs = [
      job(1, { processQueue: 'host-a' }),
      job(2, { processQueue: 'host-b' }),
      job(3, { processQueue: 'host-a', status: 'exited', exitCode: 0 }),
    ];
    expect(withGoneHosts(jobs, new Set(['host-a'])).map((j) => j.status)).toEqual([
      'lost',
      'running',
      'exited',
    ]);
    expect(withGoneHosts(jobs, new Set())).toEqual(jobs);
  });
});
