/**
 * Starts the SDK's workflow threads through worker/workflow-thread-entry.ts, which turns off the SDK's
 * per-promise stack capture there (see that file for why). The SDK starts each thread with
 * `new Worker(<its thread script>)` from `node:worker_threads`; this puts a subclass in that module's
 * place that starts that one script through the entry, and leaves every other thread as it was.
 */
import fs from 'node:fs';
import path from 'node:path';
import workerThreads from 'node:worker_threads';

/** The script the SDK starts each workflow thread with. */
export const SDK_THREAD_SCRIPT = path.join(
  path.dirname(require.resolve('@temporalio/worker')),
  'workflow',
  'workflow-worker-thread.js',
);

/** Compiled beside this file; absent when this runs from the TypeScript sources (tests). */
const THREAD_ENTRY = path.join(__dirname, 'workflow-thread-entry.js');

let installed = false;

/**
 * Makes the SDK's workflow threads started from now on run without the stack capture. Idempotent.
 * Returns whether it is in place (not when running from the sources, where there is no compiled entry).
 */
export function startWorkflowThreadsWithoutStackCapture(): boolean {
  if (installed) return true;
  if (!fs.existsSync(THREAD_ENTRY)) return false;
  const SdkWorker = workerThreads.Worker;
  class WorkflowThread extends SdkWorker {
    constructor(script: string | URL, options?: workerThreads.WorkerOptions) {
      if (script === SDK_THREAD_SCRIPT && options?.workerData === undefined) {
        super(THREAD_ENTRY, { ...options, workerData: { sdkThreadScript: script } });
      } else {
        super(script, options);
      }
    }
  }
  workerThreads.Worker = WorkflowThread;
  installed = true;
  return true;
}
