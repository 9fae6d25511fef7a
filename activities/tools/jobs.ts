/**
 * The processes a worker runs for its goals (spec S-JOBS): background jobs, each in its own process
 * group inside the goal's sandbox with a 1 MiB ring buffer of its output, and the foreground
 * commands running right now. One per worker process. When the worker shuts down it kills them
 * all and refuses new tool calls, so Temporal retries them on another worker.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { ApplicationFailure } from '@temporalio/common';
import { FailureType } from '../../core/errors';
import {
  BASH_KILL_GRACE_MS,
  JOB_OUTPUT_BUFFER_BYTES,
  MAX_FINISHED_JOBS_PER_SESSION,
  MAX_RUNNING_JOBS_PER_SESSION,
} from '../../core/limits';
import { DEFAULT_RESOURCE_LIMITS, type SandboxSettings } from '../../core/sandbox-settings';
import { defaultSandboxHost, type SandboxHost, sessionDirRoot } from '../sandbox/host';
import { prepareLaunch } from '../sandbox/launch';
import { limitMessage } from '../sandbox/resource-limits';
import { ByteRing, readRingText } from './ring-buffer';
import { ToolProcess } from './tool-process';

/** What a shutting-down worker answers to every new tool call (spec S-JOBS). */
export const SHUTTING_DOWN_MESSAGE = 'goalrun worker is shutting down; command not started';

/**
 * What a command that was already running fails with when the shutdown kills it: "not started" would
 * be untrue, and the retry's result warns the model that the command may already have run.
 */
export const KILLED_BY_SHUTDOWN_MESSAGE =
  'goalrun worker is shutting down; command killed, Temporal runs it again on another worker';

/** The failure a tool call gets from a shutting-down worker: retryable, so another worker runs it. */
export function shuttingDownFailure(message = SHUTTING_DOWN_MESSAGE): ApplicationFailure {
  return ApplicationFailure.create({
    type: FailureType.ToolHostShuttingDown,
    message,
    nonRetryable: false,
  });
}

/** A job's state. `lost` is for the workflow's registry (the host died); a live host never reports it. */
export type JobStatus = 'running' | 'exited' | 'killed';

/** What is known about a job. */
export interface JobInfo {
  jobId: string;
  sessionId: string;
  command: string;
  status: JobStatus;
  pid: number;
  startedAt: number;
  endedAt?: number;
  exitCode?: number | null;
  signal?: string | null;
  /** Bytes of output so far (including dropped ones). */
  outputBytes: number;
}

/** A page of a job's output. */
export interface JobOutputPage {
  job: JobInfo;
  /** Absolute byte offset of the page. */
  offset: number;
  /** Where the next read continues. */
  nextOffset: number;
  text: string;
  /** Bytes before `offset` (from the asked offset) that the ring buffer had already dropped. */
  dropped: number;
  /** True when more output is buffered beyond `nextOffset`. */
  more: boolean;
  /** How many bytes of output the job keeps. */
  capacity: number;
}

interface Job {
  info: JobInfo;
  process: ToolProcess;
  output: ByteRing;
}

interface Foreground {
  sessionId: string;
  /** Asks the command to stop; the runner kills its process and settles. */
  stop: () => void;
  done: Promise<void>;
}

/** A job start request. */
export interface JobStart {
  sessionId: string;
  /** The id the workflow assigned (`job-N`); one is made up when absent. */
  jobId?: string;
  command: string;
  workspace: string;
  sandbox: SandboxSettings;
  escalated: boolean;
}

/** Knobs tests turn; a worker uses the defaults. */
export interface JobManagerOptions {
  host?: SandboxHost;
  bufferBytes?: number;
  killGraceMs?: number;
}

/** Background jobs and running commands of one worker process. */
export class JobManager {
  readonly host: SandboxHost;
  private readonly bufferBytes: number;
  private readonly killGraceMs: number;
  private readonly sessions = new Map<string, Map<string, Job>>();
  private readonly foreground = new Set<Foreground>();
  private stopping = false;

  constructor(options: JobManagerOptions = {}) {
    this.host = options.host ?? defaultSandboxHost();
    this.bufferBytes = options.bufferBytes ?? JOB_OUTPUT_BUFFER_BYTES;
    this.killGraceMs = options.killGraceMs ?? BASH_KILL_GRACE_MS;
  }

  /** True once shutdown began. */
  get shuttingDown(): boolean {
    return this.stopping;
  }

  /** Throws the retryable ToolHostShuttingDown failure once shutdown began. */
  assertAcceptingWork(): void {
    if (this.stopping) throw shuttingDownFailure();
  }

  /**
   * Registers a running foreground command so that shutdown and killSession can stop it.
   * Returns the function to call when it is over.
   */
  trackForeground(sessionId: string, stop: () => void): () => void {
    let finish: () => void = () => {};
    const entry: Foreground = { sessionId, stop, done: new Promise((resolve) => (finish = resolve)) };
    this.foreground.add(entry);
    return () => {
      this.foreground.delete(entry);
      finish();
    };
  }

  /** Starts a background job, or returns the running job of that id (a retried start). */
  async start(
    request: JobStart,
  ): Promise<{ ok: true; job: JobInfo; existing: boolean } | { ok: false; error: string }> {
    this.assertAcceptingWork();
    const jobs = this.jobsOf(request.sessionId);
    const jobId = request.jobId ?? `job-${randomBytes(3).toString('hex')}`;
    const earlier = jobs.get(jobId);
    if (earlier) {
      if (earlier.info.command === request.command)
        return { ok: true, job: { ...earlier.info }, existing: true };
      return { ok: false, error: `job id ${jobId} is already used by another command in this goal` };
    }
    const running = [...jobs.values()].filter((job) => job.info.status === 'running').length;
    if (running >= MAX_RUNNING_JOBS_PER_SESSION) {
      return {
        ok: false,
        error: `${running} background jobs are already running (at most ${MAX_RUNNING_JOBS_PER_SESSION}); kill one with job-kill first`,
      };
    }
    const launch = await prepareLaunch({
      command: request.command,
      workspace: request.workspace,
      sessionId: request.sessionId,
      settings: request.sandbox,
      escalated: request.escalated,
      host: this.host,
      limited: true,
    });
    if (!launch.ok) return { ok: false, error: launch.error };
    this.assertAcceptingWork();
    const output = new ByteRing(this.bufferBytes);
    const started = await ToolProcess.start(launch.spec, (chunk) => output.push(chunk));
    if (!started.ok) {
      await launch.spec.limits?.cleanup();
      return { ok: false, error: started.error };
    }
    const job: Job = {
      process: started.process,
      output,
      info: {
        jobId,
        sessionId: request.sessionId,
        command: request.command,
        status: 'running',
        pid: started.process.pid,
        startedAt: Date.now(),
        outputBytes: 0,
      },
    };
    jobs.set(jobId, job);
    started.process.exited.then((exit) => {
      if (job.info.status === 'running') job.info.status = 'exited';
      job.info.endedAt = Date.now();
      job.info.exitCode = exit.code;
      job.info.signal = exit.signal;
      const failure = started.process.sandboxFailure();
      if (failure) output.push(Buffer.from(`[sandbox failed to start: ${failure}]\n`));
      const hit = launch.spec.limits?.overLimit();
      if (hit)
        output.push(Buffer.from(`${limitMessage(hit, request.sandbox.limits ?? DEFAULT_RESOURCE_LIMITS)}\n`));
      void launch.spec.limits?.cleanup();
      this.forgetOldJobs(request.sessionId);
    });
    if (this.stopping) {
      // The shutdown began while it was being started, after it had collected the jobs to kill.
      await this.killJob(job);
      throw shuttingDownFailure();
    }
    return { ok: true, job: this.snapshot(job), existing: false };
  }

  /** A page of a job's output from an absolute byte offset; undefined for an unknown job. */
  read(sessionId: string, jobId: string, offset: number, limit: number): JobOutputPage | undefined {
    const job = this.sessions.get(sessionId)?.get(jobId);
    if (!job) return undefined;
    const page = readRingText(job.output, offset, limit);
    return {
      job: this.snapshot(job),
      offset: page.offset,
      nextOffset: page.next,
      text: page.text,
      dropped: page.dropped,
      more: page.next < job.output.end,
      capacity: job.output.capacity,
    };
  }

  /** The jobs of a session, oldest first. */
  list(sessionId: string): JobInfo[] {
    return [...(this.sessions.get(sessionId)?.values() ?? [])].map((job) => this.snapshot(job));
  }

  /** Kills one job or every running job of a session; returns the ids killed. */
  async kill(sessionId: string, jobId: string | 'all'): Promise<{ killed: string[]; unknown: boolean }> {
    const jobs = this.sessions.get(sessionId);
    if (jobId !== 'all' && !jobs?.has(jobId)) return { killed: [], unknown: true };
    const targets = [...(jobs?.values() ?? [])].filter(
      // An unsandboxed job's leftovers outlive its shell: those count as running too.
      (job) =>
        (jobId === 'all' || job.info.jobId === jobId) &&
        (job.info.status === 'running' || job.process.isAlive()),
    );
    await Promise.all(targets.map((job) => this.killJob(job)));
    return { killed: targets.map((job) => job.info.jobId), unknown: false };
  }

  /**
   * Whether the session has anything here that killSession removes: a job (running or kept), a
   * running command, or its private directory (made by the first sandboxed process it started).
   */
  holds(sessionId: string): boolean {
    if ((this.sessions.get(sessionId)?.size ?? 0) > 0) return true;
    for (const entry of this.foreground) if (entry.sessionId === sessionId) return true;
    return existsSync(sessionDirRoot(this.host, sessionId));
  }

  /**
   * The goal ended: kills its jobs and running commands, forgets them, and removes its private
   * /tmp. Returns the ids of the jobs that were still running.
   */
  async killSession(sessionId: string): Promise<string[]> {
    const { killed } = await this.kill(sessionId, 'all');
    const commands = [...this.foreground].filter((entry) => entry.sessionId === sessionId);
    for (const entry of commands) entry.stop();
    await Promise.all(commands.map((entry) => entry.done));
    this.sessions.delete(sessionId);
    await rm(sessionDirRoot(this.host, sessionId), { recursive: true, force: true });
    return killed;
  }

  /**
   * Refuses new work from now on, kills every background job, and gives running commands `graceMs`
   * to finish before it kills them: a command that finishes in time is recorded as usual and never
   * runs again (issue 16: a `sleep 3` was killed 43 ms into a promised 30 s).
   */
  async shutdown(graceMs = 0): Promise<void> {
    this.stopping = true;
    const entries = [...this.foreground];
    const jobs = [...this.sessions.values()].flatMap((session) => [...session.values()]);
    const jobsKilled = Promise.all(
      jobs.filter((job) => job.info.status === 'running').map((job) => this.killJob(job)),
    );
    let timer: NodeJS.Timeout | undefined;
    const graceOver = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, graceMs);
      timer.unref();
    });
    await Promise.race([Promise.all(entries.map((entry) => entry.done)), graceOver]);
    clearTimeout(timer);
    for (const entry of entries) if (this.foreground.has(entry)) entry.stop();
    await Promise.all([...entries.map((entry) => entry.done), jobsKilled]);
  }

  private async killJob(job: Job): Promise<void> {
    job.info.status = 'killed';
    await job.process.kill(this.killGraceMs);
    await Promise.race([job.process.closed, new Promise((resolve) => setTimeout(resolve, 500).unref())]);
    job.process.detach();
  }

  private jobsOf(sessionId: string): Map<string, Job> {
    let jobs = this.sessions.get(sessionId);
    if (!jobs) {
      jobs = new Map();
      this.sessions.set(sessionId, jobs);
    }
    return jobs;
  }

  /** Drops the oldest finished jobs beyond the per-session cap. */
  private forgetOldJobs(sessionId: string): void {
    const jobs = this.sessions.get(sessionId);
    if (!jobs) return;
    const finished = [...jobs.values()].filter((job) => job.info.status !== 'running');
    for (const job of finished.slice(0, Math.max(0, finished.length - MAX_FINISHED_JOBS_PER_SESSION))) {
      jobs.delete(job.info.jobId);
    }
  }

  private snapshot(job: Job): JobInfo {
    return { ...job.info, outputBytes: job.output.end };
  }
}

let processManager: JobManager | undefined;

/** The JobManager of this worker process (the one the worker's shutdown hook must call). */
export function processJobManager(): JobManager {
  processManager ??= new JobManager();
  return processManager;
}
