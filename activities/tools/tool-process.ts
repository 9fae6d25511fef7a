/**
 * One process a tool started (a bash command or a background job), sandboxed or not, and the one
 * way to kill everything it started. Unsandboxed, that is its process group. Sandboxed, bwrap's
 * --new-session puts the command in a group of its own inside a PID namespace: it first gets
 * SIGTERM, then bwrap is killed, and the namespace dies with bwrap (--die-with-parent), so nothing
 * it started survives, not even a process that left its group.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { isProcessAlive, processGroupExists } from '../../system/processes';
import type { LaunchSpec } from '../sandbox/launch';
import { BWRAP_INFO_FD } from '../sandbox/launch';
import { type StartedChild, startChild } from '../sandbox/spawn-child';
import { isGroupAlive, killProcessGroup, signalGroup } from './process-group';

/** How often a dying sandbox is checked. */
const POLL_INTERVAL_MS = 25;
/** How long SIGKILLed processes get to disappear before we give up waiting. */
const SIGKILL_WAIT_MS = 5_000;
/** How long a kill waits for bwrap to report the sandbox's pid. */
const INFO_WAIT_MS = 2_000;
/** bwrap's own error lines start with this. */
const BWRAP_ERROR_PREFIX = 'bwrap:';
/** bwrap's own stderr is short; more than this is not bwrap talking. */
const MAX_SANDBOX_STDERR_CHARS = 4_000;

/** How a process ended. */
export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A started tool process. */
export class ToolProcess {
  /** Pid of the spawned program (bwrap or bash), leader of its own process group. */
  readonly pid: number;
  readonly sandboxed: boolean;
  readonly exited: Promise<ProcessExit>;
  /** Resolves when the output pipes are closed. */
  readonly closed: Promise<void>;
  private innerPid: number | undefined;
  /** Resolves once bwrap reported the sandbox's pid, or can no longer report it. */
  private readonly innerPidKnown: Promise<void>;
  private stderrText = '';
  private exit: ProcessExit | undefined;

  private constructor(
    private readonly child: StartedChild,
    pid: number,
    spec: LaunchSpec,
    onOutput: (chunk: Buffer) => void,
  ) {
    this.pid = pid;
    this.sandboxed = spec.sandboxed;
    this.exited = new Promise((resolve) =>
      child.once('exit', (code: number | null, signal: NodeJS.Signals | null) => {
        this.exit = { code, signal };
        resolve(this.exit);
      }),
    );
    this.closed = new Promise((resolve) => child.once('close', () => resolve()));
    child.stdout?.on('data', onOutput);
    child.stderr?.on('data', (chunk: Buffer) => {
      if (!this.sandboxed) {
        onOutput(chunk);
        return;
      }
      if (this.stderrText.length < MAX_SANDBOX_STDERR_CHARS) this.stderrText += chunk.toString('utf8');
    });
    const info = child.stdio[BWRAP_INFO_FD] as NodeJS.ReadableStream | null | undefined;
    let infoDone: () => void = () => {};
    this.innerPidKnown = new Promise((resolve) => {
      infoDone = resolve;
    });
    if (info) {
      let text = '';
      info.on('data', (chunk: Buffer) => {
        text += chunk.toString('utf8');
        const match = /"child-pid"\s*:\s*(\d+)/.exec(text);
        if (match) {
          this.innerPid = Number(match[1]);
          infoDone();
        }
      });
      info.on('error', infoDone);
      info.on('close', infoDone);
    } else {
      infoDone();
    }
    this.exited.then(infoDone);
  }

  /** Starts a process; an error (missing program) is returned, not thrown. */
  static async start(
    spec: LaunchSpec,
    onOutput: (chunk: Buffer) => void,
  ): Promise<{ ok: true; process: ToolProcess } | { ok: false; error: string }> {
    // From the tool host's spawn server, in a process group of its own (pgid = pid).
    const started = await startChild({
      file: spec.file,
      args: spec.args,
      env: spec.env,
      cwd: spec.cwd,
      stdin: false,
      infoFd: spec.sandboxed,
    });
    if (!started.ok) return started;
    return { ok: true, process: new ToolProcess(started.child, started.pid, spec, onOutput) };
  }

  /** How the process ended, once it has. */
  get exitStatus(): ProcessExit | undefined {
    return this.exit;
  }

  /** bwrap's own complaint when the sandbox failed to start (the command then never ran). */
  sandboxFailure(): string | undefined {
    if (!this.sandboxed) return undefined;
    const line = this.stderrText
      .split('\n')
      .map((text) => text.trim())
      .find((text) => text.startsWith(BWRAP_ERROR_PREFIX));
    return line;
  }

  /** True while anything the process started may still run. */
  isAlive(): boolean {
    if (!this.sandboxed) return isGroupAlive(this.pid);
    if (this.exit === undefined && isProcessAlive(this.pid)) return true;
    return this.innerPid !== undefined && isProcessAlive(this.innerPid);
  }

  /** Processes of the group left after the leader exited (unsandboxed only; a sandbox takes them along). */
  hasLeftovers(): boolean {
    return !this.sandboxed && isGroupAlive(this.pid);
  }

  /**
   * Kills everything the process started: SIGTERM first, SIGKILL after `graceMs`. Resolves true
   * once nothing is left.
   */
  async kill(graceMs: number): Promise<boolean> {
    if (!this.sandboxed) return killProcessGroup(this.pid, graceMs);
    // Killing bwrap before its sandbox exists could orphan the sandbox: learn its pid first.
    await Promise.race([this.innerPidKnown, delay(INFO_WAIT_MS, undefined, { ref: false })]);
    if (!this.isAlive()) return true;
    // Before the sandbox's session exists (still being set up) there is nobody to ask nicely.
    if (this.innerPid !== undefined && processGroupExists(this.innerPid)) {
      signalGroup(this.innerPid, 'SIGTERM');
      signalGroup(this.innerPid, 'SIGCONT');
      if (await this.waitGone(graceMs)) return true;
    }
    // bwrap's death takes the whole PID namespace along (--die-with-parent).
    signalGroup(this.pid, 'SIGKILL');
    if (this.innerPid !== undefined) signalGroup(this.innerPid, 'SIGKILL');
    return this.waitGone(SIGKILL_WAIT_MS);
  }

  private async waitGone(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (this.isAlive()) {
      if (Date.now() >= deadline) return false;
      await delay(POLL_INTERVAL_MS);
    }
    return true;
  }

  /** Stops reading output (after the process is gone, a grandchild that escaped may hold the pipes). */
  detach(): void {
    this.child.stdout?.destroy();
    this.child.stderr?.destroy();
    (
      this.child.stdio[BWRAP_INFO_FD] as (NodeJS.ReadableStream & { destroy?: () => void }) | undefined
    )?.destroy?.();
  }
}
