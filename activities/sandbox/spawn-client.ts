/**
 * The worker's side of the spawn server (spawn-server.ts): the server process, and one
 * {@link RemoteChild} per process it started, which looks to its user like the `ChildProcess` a
 * direct `spawn` returns (pid, output streams, stdin, `exit` and `close`).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import { Readable, Writable } from 'node:stream';
import { signalGroup } from '../tools/process-group';
import {
  encodeFrame,
  FRAME,
  type Frame,
  FrameReader,
  type SpawnRequest,
  STREAM_NUMBER,
} from './spawn-protocol';

/** Why a call did not start: the server went away first. */
export class SpawnServerGone extends Error {
  constructor(
    message: string,
    /** The server never came up, so it started nothing: the call may be started another way. */
    readonly neverReady: boolean,
  ) {
    super(message);
  }
}

/** A process the server started, seen from the worker. */
export class RemoteChild extends EventEmitter {
  pid: number | undefined;
  readonly stdout: Readable;
  readonly stderr: Readable;
  readonly stdin: Writable | null;
  /** bwrap's info fd (fd 3), when asked for. */
  readonly info: Readable | null;
  exitCode: number | null = null;
  signalCode: NodeJS.Signals | null = null;

  constructor(
    readonly id: number,
    withStdin: boolean,
    withInfo: boolean,
    private readonly server: SpawnServer,
  ) {
    super();
    this.stdout = this.output();
    this.stderr = this.output();
    this.info = withInfo ? this.output() : null;
    this.stdin = withStdin
      ? new Writable({
          write: (chunk: Buffer, _encoding, done) => {
            server.send(FRAME.stdin, id, chunk);
            done();
          },
          final: (done) => {
            server.send(FRAME.stdinEnd, id);
            done();
          },
        })
      : null;
  }

  /** The streams in `ChildProcess.stdio` order. */
  get stdio(): [Writable | null, Readable, Readable, Readable | null] {
    return [this.stdin, this.stdout, this.stderr, this.info];
  }

  private output(): Readable {
    const stream: Readable = new Readable({
      read() {},
      destroy: (error, done) => {
        // Destroyed before its end (not by autoDestroy after it): stop the server reading too, since
        // an escaped grandchild may hold the pipe open forever.
        if (!stream.readableEnded) this.server.send(FRAME.detach, this.id);
        done(error);
      },
    });
    return stream;
  }

  /** The stream of an output frame type (or of its number in a streamEnd frame). */
  stream(type: number): Readable | null {
    if (type === FRAME.stdout || type === STREAM_NUMBER[FRAME.stdout]) return this.stdout;
    if (type === FRAME.stderr || type === STREAM_NUMBER[FRAME.stderr]) return this.stderr;
    return this.info;
  }

  /** The call is over without word from the server (it died): what it started is killed. */
  abandon(): void {
    if (this.pid !== undefined && this.exitCode === null && this.signalCode === null) {
      signalGroup(this.pid, 'SIGKILL');
      this.signalCode = 'SIGKILL';
      this.emit('exit', null, 'SIGKILL');
    }
    for (const stream of [this.stdout, this.stderr, this.info])
      if (stream && !stream.destroyed) stream.push(null);
    this.emit('close', this.exitCode, this.signalCode);
  }
}

type Pending = { resolve: (child: RemoteChild) => void; reject: (error: Error) => void; child: RemoteChild };

/** One spawn server process and the calls it runs. */
export class SpawnServer {
  private readonly process: ChildProcess;
  private readonly pending = new Map<number, Pending>();
  private readonly running = new Map<number, RemoteChild>();
  private nextId = 1;
  private gone = false;
  private ready = false;
  /** Frames read and not yet handled, in order. */
  private inbox: Frame[] = [];
  private drainScheduled = false;
  private goneReason = '';
  /** Called once when the server process is gone (it exited, or its pipes broke). */
  onGone: (reason: string) => void = () => {};

  constructor(script: string) {
    // An empty environment: the server needs none, and each call carries the tool's own.
    this.process = spawn(process.execPath, [script], {
      env: {},
      // Own process group: a terminal's Ctrl-C goes to the worker, which stops its tools with grace.
      detached: true,
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    const reader = new FrameReader((frame) => this.inbox.push(frame));
    this.process.stdout?.on('data', (chunk: Buffer) => {
      try {
        reader.push(chunk);
      } catch (error) {
        this.fail((error as Error).message);
        return;
      }
      if (!this.drainScheduled) this.drain();
    });
    this.process.once('error', (error) => this.fail(`spawn server failed to start: ${error.message}`));
    // 'close', not 'exit': by then everything it wrote has been read.
    this.process.once('close', (code, signal) =>
      this.fail(`spawn server exited (${signal ? `signal ${signal}` : `code ${code}`})`),
    );
    this.process.stdin?.on('error', (error) => this.fail(`spawn server pipe broke: ${error.message}`));
    this.updateRef();
  }

  /** The server's pid (for tests). */
  get pid(): number | undefined {
    return this.process.pid;
  }

  /** False once the server is gone; a new one must be started. */
  get alive(): boolean {
    return !this.gone;
  }

  /** Asks the server to start a process; rejects with SpawnServerGone when it went away first. */
  start(request: SpawnRequest): Promise<RemoteChild> {
    if (this.gone) return Promise.reject(new SpawnServerGone('spawn server is gone', !this.ready));
    const id = this.nextId++;
    const child = new RemoteChild(id, request.stdin, request.infoFd, this);
    const started = new Promise<RemoteChild>((resolve, reject) => {
      this.pending.set(id, { resolve, reject, child });
    });
    this.updateRef();
    this.send(FRAME.spawn, id, JSON.stringify(request));
    return started;
  }

  /** Writes a frame to the server (dropped once it is gone). */
  send(type: (typeof FRAME)[keyof typeof FRAME], id: number, payload?: Buffer | string): void {
    if (this.gone) return;
    this.process.stdin?.write(encodeFrame(type, id, payload));
  }

  /** Stops the server (tests; a worker's server ends with the worker). */
  stop(): void {
    this.process.stdin?.end();
  }

  /**
   * Handles the frames read. A process's exit can arrive in the same read as its start: after a start,
   * the rest waits for the next turn of the event loop, so that whoever awaited the start has attached
   * its listeners first (as with a ChildProcess, whose events never come in the turn it started).
   */
  private drain(): void {
    this.drainScheduled = false;
    while (this.inbox.length > 0) {
      const frame = this.inbox.shift() as Frame;
      this.receive(frame);
      if (frame.type === FRAME.spawned && this.inbox.length > 0) {
        this.drainScheduled = true;
        setImmediate(() => this.drain());
        return;
      }
    }
    if (this.gone) this.abandonAll();
  }

  private receive(frame: Frame): void {
    const { id, type, payload } = frame;
    if (type === FRAME.ready) {
      this.ready = true;
      return;
    }
    const waiting = this.pending.get(id);
    if (waiting) {
      this.pending.delete(id);
      if (type === FRAME.spawned) {
        waiting.child.pid = (JSON.parse(payload.toString('utf8')) as { pid: number }).pid;
        this.running.set(id, waiting.child);
        waiting.resolve(waiting.child);
      } else {
        const { message } = JSON.parse(payload.toString('utf8')) as { message: string };
        waiting.reject(new Error(message));
      }
      this.updateRef();
      return;
    }
    const child = this.running.get(id);
    if (!child) return;
    switch (type) {
      case FRAME.stdout:
      case FRAME.stderr:
      case FRAME.info:
        child.stream(type)?.push(payload);
        break;
      case FRAME.streamEnd: {
        const stream = child.stream(payload[0]);
        if (stream && !stream.destroyed) stream.push(null);
        break;
      }
      case FRAME.exit: {
        const exit = JSON.parse(payload.toString('utf8')) as {
          code: number | null;
          signal: NodeJS.Signals | null;
        };
        child.exitCode = exit.code;
        child.signalCode = exit.signal;
        child.emit('exit', exit.code, exit.signal);
        break;
      }
      case FRAME.close:
        this.running.delete(id);
        this.updateRef();
        child.emit('close', child.exitCode, child.signalCode);
        break;
    }
  }

  private fail(reason: string): void {
    if (this.gone) return;
    this.gone = true;
    this.goneReason = reason;
    this.process.kill('SIGKILL');
    // What the server said before it went still counts; the calls it left are ended after it.
    if (!this.drainScheduled) this.drain();
    this.onGone(reason);
  }

  /** Ends the calls the server left: unstarted ones fail, started ones are killed. */
  private abandonAll(): void {
    for (const { reject } of this.pending.values()) reject(new SpawnServerGone(this.goneReason, !this.ready));
    this.pending.clear();
    for (const child of this.running.values()) child.abandon();
    this.running.clear();
    this.updateRef();
  }

  /** An idle server keeps no process alive (a test or a script ends when its work is done). */
  private updateRef(): void {
    const busy = !this.gone && (this.pending.size > 0 || this.running.size > 0);
    const handles = [this.process, this.process.stdout as Socket | null, this.process.stdin as Socket | null];
    for (const handle of handles) {
      if (busy) handle?.ref();
      else handle?.unref();
    }
  }
}
