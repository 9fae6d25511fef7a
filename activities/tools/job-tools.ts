/**
 * Background jobs as the model sees them: starting one (bash run_in_background), reading its output
 * by absolute byte offset (bash job_id, `job-output`) and killing it (`job-kill`).
 */
import { setTimeout as delay } from 'node:timers/promises';
import { z } from 'zod';
import {
  JOB_OUTPUT_BUFFER_BYTES,
  JOB_OUTPUT_DEFAULT_LIMIT,
  JOB_OUTPUT_MAX_LIMIT,
  JOB_OUTPUT_MAX_WAIT_SECONDS,
} from '../../core/limits';
import { DEFAULT_SANDBOX } from '../../core/sandbox-settings';
import { TOOL } from '../../core/tool-names';
import { type JobInfo, type JobOutputPage, processJobManager } from './jobs';
import type { ToolContext, ToolDefinition, ToolOutcome } from './types';

const BYTES_PER_KIB = 1024;
/** How often a job-output wait looks for new output (and heartbeats). */
const WAIT_POLL_MS = 250;

function managerOf(context: ToolContext) {
  return context.jobs ?? processJobManager();
}

/** `1024 KiB`, `100 bytes`. */
function describeBytes(bytes: number): string {
  return bytes >= BYTES_PER_KIB ? `${Math.round(bytes / BYTES_PER_KIB)} KiB` : `${bytes} bytes`;
}

/** `running`, `exited (code 0)`, `killed`. */
export function describeStatus(job: JobInfo): string {
  if (job.status !== 'exited') return job.status;
  return job.exitCode !== null && job.exitCode !== undefined
    ? `exited (code ${job.exitCode})`
    : `exited (signal ${job.signal ?? 'unknown'})`;
}

/** Starts a background job for bash run_in_background. */
export async function startBackgroundJob(context: ToolContext, command: string): Promise<ToolOutcome> {
  const started = await managerOf(context).start({
    sessionId: context.sessionId,
    jobId: context.jobId,
    command,
    workspace: context.workspace,
    sandbox: context.sandbox ?? DEFAULT_SANDBOX,
    escalated: context.escalated ?? false,
  });
  if (!started.ok) return { ok: false, output: started.error, changedWorkspace: false };
  const { job } = started;
  const again = started.existing ? ' (already running: this call was retried)' : '';
  return {
    ok: true,
    output: [
      `started background job ${job.jobId}${again}: ${command}`,
      `read its output with job-output {"job_id":"${job.jobId}","offset":0}, stop it with job-kill {"job_id":"${job.jobId}"}`,
    ].join('\n'),
    changedWorkspace: true,
    job: { jobId: job.jobId, command, pid: job.pid },
  };
}

/** The header and text of one page of a job's output. */
export function formatJobPage(page: JobOutputPage): string {
  const { job } = page;
  const lines: string[] = [];
  if (page.dropped > 0) {
    lines.push(
      `[${page.dropped} bytes before offset ${page.offset} were dropped: a job keeps only the last ` +
        `${describeBytes(page.capacity)} of its output; reading from offset ${page.offset}]`,
    );
  }
  const where = page.more
    ? `next_offset=${page.nextOffset} (more available)`
    : job.status === 'running'
      ? `next_offset=${page.nextOffset} (job still running; read again later for new output)`
      : `next_offset=${page.nextOffset} (end of output)`;
  lines.push(`job=${job.jobId} status=${describeStatus(job)} offset=${page.offset} ${where}`);
  return `${lines.join('\n')}\n${page.text}`;
}

/** Reads a page of a job's output for bash job_id and job-output. */
export function readJobOutput(
  context: ToolContext,
  jobId: string,
  offset: number,
  limit: number,
): ToolOutcome {
  const page = managerOf(context).read(context.sessionId, jobId, offset, limit);
  if (!page) return { ok: false, output: unknownJob(context, jobId), changedWorkspace: false };
  return { ok: true, output: formatJobPage(page), changedWorkspace: false };
}

function unknownJob(context: ToolContext, jobId: string): string {
  const known = managerOf(context)
    .list(context.sessionId)
    .map((job) => `${job.jobId} [${describeStatus(job)}]`);
  const list = known.length > 0 ? `; jobs of this goal on this host: ${known.join(', ')}` : '';
  return `no background job ${jobId} in this goal on this host${list}`;
}

const jobOutputArgs = z.object({
  job_id: z.string().min(1).describe('The job id that bash run_in_background returned, e.g. "job-1".'),
  offset: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe('Absolute byte offset to read from (default 0; pass next_offset of the last read).'),
  limit: z
    .number()
    .int()
    .positive()
    .max(JOB_OUTPUT_MAX_LIMIT)
    .optional()
    .describe(`Bytes to read (default ${JOB_OUTPUT_DEFAULT_LIMIT}, at most ${JOB_OUTPUT_MAX_LIMIT}).`),
  wait_seconds: z
    .number()
    .int()
    .min(0)
    .max(JOB_OUTPUT_MAX_WAIT_SECONDS)
    .optional()
    .describe(
      `Wait up to this many seconds (at most ${JOB_OUTPUT_MAX_WAIT_SECONDS}) for output past offset or for the job to end, then read (default 0: read at once). Wait this way for a slow job instead of calling again and again.`,
    ),
});

type JobOutputArgs = z.infer<typeof jobOutputArgs>;

/** `job-output`: a page of a background job's combined stdout and stderr. */
export const jobOutputTool: ToolDefinition<JobOutputArgs> = {
  name: TOOL.jobOutput,
  description: [
    'Reads the combined stdout and stderr of a background job started with bash run_in_background, from an',
    'absolute byte offset; the header gives the job status and next_offset to continue from. A job keeps the',
    `last ${describeBytes(JOB_OUTPUT_BUFFER_BYTES)} of its output: reading an offset that was dropped starts at the oldest kept byte and says so.`,
  ].join(' '),
  schema: jobOutputArgs,
  summarize: (args) => `job-output: ${args.job_id}${args.offset ? ` from ${args.offset}` : ''}`,
  run: async (args, context) => {
    const offset = args.offset ?? 0;
    if (args.wait_seconds) await waitForJob(context, args.job_id, offset, args.wait_seconds * 1000);
    return readJobOutput(context, args.job_id, offset, args.limit ?? JOB_OUTPUT_DEFAULT_LIMIT);
  },
};

/** Waits until a job has output past `offset`, has ended (or is unknown), or `waitMs` is up. */
async function waitForJob(
  context: ToolContext,
  jobId: string,
  offset: number,
  waitMs: number,
): Promise<void> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const job = managerOf(context)
      .list(context.sessionId)
      .find((known) => known.jobId === jobId);
    if (job?.status !== 'running' || job.outputBytes > offset || Date.now() >= deadline) return;
    context.heartbeat({ waitingForJob: jobId });
    try {
      await delay(Math.min(WAIT_POLL_MS, deadline - Date.now()), undefined, { signal: context.signal });
    } catch {
      // Cancelled: the read below answers, and the tool call ends as cancelled.
      return;
    }
  }
}

const jobKillArgs = z.object({
  job_id: z.string().min(1).describe('The job to kill, or "all" for every running job of this goal.'),
});

type JobKillArgs = z.infer<typeof jobKillArgs>;

/** `job-kill`: kills a background job's whole process group, or every job of the goal. */
export const jobKillTool: ToolDefinition<JobKillArgs> = {
  name: TOOL.jobKill,
  description:
    'Kills a background job and every process it started (its whole process group), or every running job of this goal with "all".',
  schema: jobKillArgs,
  summarize: (args) => `job-kill: ${args.job_id}`,
  async run(args, context) {
    const { killed, unknown } = await managerOf(context).kill(context.sessionId, args.job_id);
    if (unknown) return { ok: false, output: unknownJob(context, args.job_id), changedWorkspace: false };
    const output =
      killed.length > 0
        ? `killed ${killed.join(', ')}`
        : args.job_id === 'all'
          ? 'no running jobs to kill'
          : `${args.job_id} was not running; nothing killed`;
    return { ok: true, output, changedWorkspace: killed.length > 0, killedJobs: killed };
  },
};
