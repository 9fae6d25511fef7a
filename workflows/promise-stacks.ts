/**
 * Turns off the SDK's per-promise stack capture in the workflow isolate (issue 25). The SDK installs
 * a promise hook, unconditionally, that builds a stack trace for every promise workflow code creates:
 * an `Error` whose frames it maps one by one through the bundle's source map, kept until the promise
 * settles, so that the `__stack_trace` query (the Temporal UI's "Stack Trace" tab) can answer. That
 * was about a quarter of the workflow thread's CPU per goal step, and nothing in goalrun reads it.
 *
 * How: Node formats an error's stack with the `Error.prepareStackTrace` of the realm the error was
 * made in, before the thread-wide one the SDK set. The SDK's hook records a promise's stack only when
 * its own formatter ran, so with this one in the isolate it records nothing. The bundle preloads this
 * module (worker/bundle.ts), before the SDK freezes the isolate's globals.
 *
 * What changes: `__stack_trace` answers with no stacks, and an error thrown in workflow code has its
 * stack in V8's plain format, positions in the bundle rather than in the TypeScript sources.
 *
 * A `goalrun worker` goes further: its workflow threads start without the hook at all
 * (worker/workflow-threads.ts), since the hook's `new Error()` still walks the stack before this
 * formats it to nothing. This stays for what runs the bundle on threads goalrun did not start
 * (replays, the benchmarks, a worker built from the sources).
 */

/** The SDK file whose promise hook makes the `Error` (its top frame). */
const SDK_PROMISE_HOOK_FILE = /[\\/]@temporalio[\\/]worker[\\/]lib[\\/]workflow[\\/]vm-shared\.js$/;

/** V8's own format, `<name>: <message>` and one `    at <frame>` line per frame. */
function plainStack(error: Error, callsites: NodeJS.CallSite[]): string {
  let header: string;
  try {
    header = String(error);
  } catch {
    header = 'Error';
  }
  return [header, ...callsites.map((callsite) => `    at ${callsite}`)].join('\n');
}

/**
 * Formats stacks of errors made in the isolate: nothing for the SDK hook's capture (it then keeps
 * nothing), the plain format for every other error.
 */
export function prepareWorkflowStack(error: Error, callsites: NodeJS.CallSite[]): string {
  const top = callsites[0]?.getFileName();
  if (top !== undefined && top !== null && SDK_PROMISE_HOOK_FILE.test(top)) return '';
  return plainStack(error, callsites);
}

Error.prepareStackTrace = prepareWorkflowStack;
