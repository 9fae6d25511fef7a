/**
 * An MCP stdio transport over a process goalrun starts itself, in the goal's sandbox: the SDK's own
 * StdioClientTransport spawns with the worker's environment defaults and cannot kill a process
 * group. This one spawns what prepareLaunch built (bwrap under the tools' memory, process and CPU
 * limits, the allow-listed environment plus the server's configured env), keeps what the server says
 * on stderr for the notice when it dies, and kills the server's whole group (and its limits' cgroups)
 * when closed.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { constants as osConstants } from 'node:os';
import type { ReadBuffer } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { ResourceLimits } from '../../core/sandbox-settings';
import type { LaunchSpec } from '../sandbox/launch';
import { CPU_LIMIT_SIGNAL, type LimitHit, limitMessage } from '../sandbox/resource-limits';
import { killProcessGroup } from '../tools/process-group';
import { ServerStderr } from './server-stderr';

/** Grace between SIGTERM and SIGKILL when a server is stopped. */
const KILL_GRACE_MS = 2_000;

/** Shells and bwrap report a death by signal N as exit code 128 + N. */
const SIGNAL_EXIT_BASE = 128;

/** Whether the server died of SIGXCPU, the CPU-time rlimit's signal. */
function diedOfCpuLimit(code: number | null, signal: NodeJS.Signals | null): boolean {
  return signal === CPU_LIMIT_SIGNAL || code === SIGNAL_EXIT_BASE + osConstants.signals[CPU_LIMIT_SIGNAL];
}

/**
 * The MCP SDK's stdio framing, loaded with the first server (the SDK's message schemas cost a
 * worker's start about 0.1 s of CPU, and most workers run no MCP server).
 */
const stdioFraming = (): typeof import('@modelcontextprotocol/sdk/shared/stdio.js') =>
  require('@modelcontextprotocol/sdk/shared/stdio.js');

/** A transport over a sandboxed child process's stdin and stdout. */
export class SandboxedStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private child?: ChildProcess;
  private readonly buffer: ReadBuffer = new (stdioFraming().ReadBuffer)();
  /** What the server said on stderr. */
  readonly stderr = new ServerStderr();
  private exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  /** The limit the server went over, when one killed it. */
  private limitHit: LimitHit | undefined;
  private closing = false;

  /** `limits` are the ones `spec.limits` enforces (for the notice naming the config key). */
  constructor(
    private readonly spec: LaunchSpec,
    private readonly limits?: ResourceLimits,
  ) {}

  /** Whether the server process is still there. */
  get alive(): boolean {
    return this.child !== undefined && this.exit === undefined;
  }

  /** How the server ended and the last thing it said on stderr, for a notice. */
  describeExit(): string {
    const how = this.exit
      ? this.exit.code !== null
        ? `exit code ${this.exit.code}`
        : `signal ${this.exit.signal ?? 'unknown'}`
      : 'still running';
    const limit = this.limitHit && this.limits ? `; ${limitMessage(this.limitHit, this.limits)}` : '';
    const said = this.stderr.summary();
    return said ? `${how}${limit}; stderr: ${said}` : `${how}${limit}`;
  }

  async start(): Promise<void> {
    const { spec } = this;
    const child = spawn(spec.file, spec.args, {
      cwd: spec.cwd,
      env: spec.env,
      // Its own process group, so stopping it stops everything it started.
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.child = child;
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', () => resolve());
      child.once('error', (err) => reject(new Error(`failed to start ${spec.file}: ${err.message}`)));
    });
    child.stdout?.on('data', (chunk: Buffer) => {
      this.buffer.append(chunk);
      for (;;) {
        let message: JSONRPCMessage | null;
        try {
          message = this.buffer.readMessage();
        } catch (err) {
          this.onerror?.(err as Error);
          continue;
        }
        if (message === null) break;
        this.onmessage?.(message);
      }
    });
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => this.stderr.append(chunk));
    child.stdin?.on('error', (err) => this.onerror?.(err));
    child.once('exit', (code, signal) => {
      this.exit = { code, signal };
      this.limitHit = this.spec.limits?.overLimit() ?? (diedOfCpuLimit(code, signal) ? 'cpu' : undefined);
      // The server's cgroups go with it (a server that died by itself was never closed).
      void this.spec.limits?.cleanup();
    });
    child.once('close', () => {
      this.buffer.clear();
      this.onclose?.();
    });
  }

  /** Waits up to `ms` for the process to end by itself: a server that fails to start says why on stderr. */
  async waitForExit(ms: number): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      child.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  async send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin || !this.alive) throw new Error(`the MCP server is not running (${this.describeExit()})`);
    await new Promise<void>((resolve, reject) => {
      stdin.write(stdioFraming().serializeMessage(message), (err) => (err ? reject(err) : resolve()));
    });
  }

  async close(): Promise<void> {
    if (this.closing || !this.child) return;
    this.closing = true;
    this.child.stdin?.end();
    if (this.alive && this.child.pid !== undefined) await killProcessGroup(this.child.pid, KILL_GRACE_MS);
    await this.spec.limits?.cleanup();
  }
}
