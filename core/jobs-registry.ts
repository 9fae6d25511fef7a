/**
 * The registry of a goal's background jobs (spec S-JOBS), kept in workflow state. The processes live
 * on the tool host; the workflow knows which jobs exist, where they run, and what became of them, so
 * it can route job-output and job-kill to the right process and kill every job when the goal ends.
 */

/** What became of a job, as far as the workflow knows. `lost`: its tool host is gone. */
export type JobStatus = 'running' | 'exited' | 'killed' | 'lost';

/** One background job. */
export interface JobRecord {
  jobId: string;
  command: string;
  status: JobStatus;
  /** Workflow time the job was started, in ms. */
  startedAtMs: number;
  /** The task queue of the worker process that holds the job. */
  processQueue: string;
  exitCode?: number | null;
}

/** Jobs listed at most; older finished ones are dropped from the registry first. */
export const JOBS_KEPT = 50;

/** The id the next background job gets: `job-N`, N one more than any id so far. */
export function nextJobId(jobs: JobRecord[]): string {
  const highest = jobs.reduce((max, job) => Math.max(max, Number(job.jobId.replace(/^job-/, '')) || 0), 0);
  return `job-${highest + 1}`;
}

/** Adds a started job, dropping the oldest finished jobs beyond JOBS_KEPT. */
export function addJob(jobs: JobRecord[], job: JobRecord): JobRecord[] {
  const next = [...jobs.filter((known) => known.jobId !== job.jobId), job];
  while (next.length > JOBS_KEPT) {
    const finished = next.findIndex((known) => known.status !== 'running');
    // No finished job (-1): drop the oldest running one.
    next.splice(Math.max(finished, 0), 1);
  }
  return next;
}

/** Sets the status of the named jobs (all running ones when `ids` is 'all'). */
export function markJobs(
  jobs: JobRecord[],
  ids: string[] | 'all',
  status: JobStatus,
  exitCode?: number | null,
): JobRecord[] {
  return jobs.map((job) =>
    (ids === 'all' ? job.status === 'running' : ids.includes(job.jobId)) && job.status === 'running'
      ? { ...job, status, ...(exitCode !== undefined ? { exitCode } : {}) }
      : job,
  );
}

/** The jobs still running, grouped by the process that holds them. */
export function runningJobsByProcess(jobs: JobRecord[]): Map<string, string[]> {
  const byQueue = new Map<string, string[]>();
  for (const job of jobs) {
    if (job.status !== 'running') continue;
    byQueue.set(job.processQueue, [...(byQueue.get(job.processQueue) ?? []), job.jobId]);
  }
  return byQueue;
}

/** The `/jobs` listing, as the spec shows it. */
/**
 * The jobs as a reader should see them when some tool hosts no longer poll: a running job of a gone
 * host is lost, although the goal records that only when it next touches the job.
 */
export function withGoneHosts(jobs: JobRecord[], goneQueues: ReadonlySet<string>): JobRecord[] {
  return jobs.map((job) =>
    job.status === 'running' && goneQueues.has(job.processQueue) ? { ...job, status: 'lost' } : job,
  );
}

export function renderJobs(jobs: JobRecord[], nowMs: number): string {
  if (jobs.length === 0) return 'no background jobs';
  const lines = jobs.map(
    (job) =>
      `- ${job.jobId} [${job.status}${job.exitCode !== undefined && job.exitCode !== null ? ` ${job.exitCode}` : ''}] ${job.command} (started ${formatAge(nowMs - job.startedAtMs)} ago)`,
  );
  return ['background jobs:', ...lines, '', 'kill with job-kill {"job_id":"<id>"} or {"job_id":"all"}'].join(
    '\n',
  );
}

function formatAge(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  const minutes = Math.floor(seconds / 60);
  const hours = Math.floor(minutes / 60);
  if (hours > 0) return `${hours}h${minutes % 60}m`;
  if (minutes > 0) return `${minutes}m${seconds % 60}s`;
  return `${seconds}s`;
}
