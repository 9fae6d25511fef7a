/**
 * An MCP stdio transport over a process goalrun starts itself, in the goal's sandbox: the SDK's own
 * StdioClientTransport spawns with the worker's environment defaults and cannot kill a process
 * group. This one spawns what prepareLaunch built (bwrap, the allow-listed environment plus the
 * server's configured env), keeps the tail of stderr for the notice when the server dies, and kills
 * the server's whole group when closed.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { clipTail } from '../../core/text';
import type { LaunchSpec } from '../sandbox/launch';
import { killProcessGroup } from '../tools/process-group';

/** How much of a server's stderr is kept, for the notice when it dies. */
const STDERR_TAIL_CHARS = 2_000;
/** Grace between SIGTERM and SIGKILL when a server is stopped. */
const KILL_GRACE_MS = 2_000;

/** A transport over a sandboxed child process's stdin and stdout. */
export class SandboxedStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private child?: ChildProcess;
  private readonly buffer = new ReadBuffer();
  private stderrTail = '';
  private exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  private closing = false;

  constructor(private readonly spec: LaunchSpec) {}

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
    const tail = this.stderrTail.trim().split('\n').slice(-3).join(' | ');
    return tail ? `${how}; stderr: ${tail}` : how;
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
    child.stderr?.on('data', (chunk: Buffer) => {
      this.stderrTail = clipTail(this.stderrTail + chunk.toString('utf8'), STDERR_TAIL_CHARS);
    });
    child.stdin?.on('error', (err) => this.onerror?.(err));
    child.once('exit', (code, signal) => {
      this.exit = { code, signal };
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
      stdin.write(serializeMessage(message), (err) => (err ? reject(err) : resolve()));
    });
  }

  async close(): Promise<void> {
    if (this.closing || !this.child) return;
    this.closing = true;
    this.child.stdin?.end();
    if (this.alive && this.child.pid !== undefined) await killProcessGroup(this.child.pid, KILL_GRACE_MS);
  }
}
