/**
 * The spawn server (issue 25): a small process, started once per tool host by the worker
 * (spawn-client.ts), that starts the tool processes the worker asks for. Forking copies the parent's
 * page tables and blocks its event loop until the child has exec'd: from a worker with a 300 MB heap
 * that was a fifth of its main thread's CPU; from this process, which loads nothing but Node's child
 * process module and the framing, it is a fraction of that.
 *
 * It starts exactly what it is told (the worker builds the sandbox's argv, environment and directory
 * as before), in a process group of its own, streams the output back and reports the exit. It holds
 * no secret: the worker starts it with an empty environment. It never signals anything: the worker
 * kills a call's process group itself (same user, same PID namespace), so timeouts and kills work as
 * they always did. It exits when its stdin closes (the worker is gone); sandboxes it started die with
 * it (bwrap --die-with-parent).
 */
import { type ChildProcess, type StdioOptions, spawn } from 'node:child_process';
import type { Readable } from 'node:stream';
import {
  encodeFrame,
  FRAME,
  type Frame,
  FrameReader,
  type SpawnRequest,
  STREAM_NUMBER,
} from './spawn-protocol';

/** The running calls, by the worker's call id. */
const calls = new Map<number, ChildProcess>();
/** Every output stream being read: paused together while the worker's pipe is full. */
const outputs = new Set<Readable>();
let blocked = false;

function send(type: (typeof FRAME)[keyof typeof FRAME], id: number, payload?: Buffer | string): void {
  if (process.stdout.write(encodeFrame(type, id, payload)) || blocked) return;
  // The worker reads slower than the tools write: stop reading them (they block on their pipes)
  // rather than hold their output here.
  blocked = true;
  for (const stream of outputs) stream.pause();
  process.stdout.once('drain', () => {
    blocked = false;
    for (const stream of outputs) stream.resume();
  });
}

function relay(id: number, stream: Readable | null | undefined, type: keyof typeof STREAM_NUMBER): void {
  if (!stream) return;
  outputs.add(stream);
  if (blocked) stream.pause();
  stream.on('data', (chunk: Buffer) => send(type, id, chunk));
  stream.once('close', () => {
    outputs.delete(stream);
    send(FRAME.streamEnd, id, Buffer.from([STREAM_NUMBER[type]]));
  });
  // A read error ends the stream ('close' follows); the exit is still reported.
  stream.on('error', () => undefined);
}

function start(id: number, request: SpawnRequest): void {
  const stdio: StdioOptions = [request.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'];
  if (request.infoFd) stdio.push('pipe');
  let child: ChildProcess;
  try {
    // Own process group (pgid = pid), so the worker can signal the whole tree at once.
    child = spawn(request.file, request.args, { cwd: request.cwd, env: request.env, detached: true, stdio });
  } catch (error) {
    send(FRAME.error, id, JSON.stringify({ message: (error as Error).message }));
    return;
  }
  let started = false;
  child.once('error', (error) => {
    if (started) return;
    calls.delete(id);
    send(FRAME.error, id, JSON.stringify({ message: error.message }));
  });
  child.once('spawn', () => {
    started = true;
    calls.set(id, child);
    send(FRAME.spawned, id, JSON.stringify({ pid: child.pid }));
    child.stdin?.on('error', () => undefined);
    relay(id, child.stdout, FRAME.stdout);
    relay(id, child.stderr, FRAME.stderr);
    relay(id, child.stdio[3] as Readable | null, FRAME.info);
    child.once('exit', (code, signal) => send(FRAME.exit, id, JSON.stringify({ code, signal })));
    child.once('close', () => {
      calls.delete(id);
      send(FRAME.close, id);
    });
  });
}

function handle(frame: Frame): void {
  if (frame.type === FRAME.spawn) {
    start(frame.id, JSON.parse(frame.payload.toString('utf8')) as SpawnRequest);
    return;
  }
  const child = calls.get(frame.id);
  if (!child) return;
  if (frame.type === FRAME.stdin) child.stdin?.write(frame.payload);
  else if (frame.type === FRAME.stdinEnd) child.stdin?.end();
  else if (frame.type === FRAME.detach) {
    for (const stream of [child.stdout, child.stderr, child.stdio[3] as Readable | null]) stream?.destroy();
  }
}

/** Serves the worker on stdin and stdout until stdin closes. */
export function serve(): void {
  const reader = new FrameReader(handle);
  process.stdin.on('data', (chunk: Buffer) => reader.push(chunk));
  // The worker is gone (or closed the pipe on purpose): nobody is left to report to.
  process.stdin.once('end', () => process.exit(0));
  process.stdout.on('error', () => process.exit(0));
  send(FRAME.ready, 0);
}

if (require.main === module) serve();
