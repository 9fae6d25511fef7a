/**
 * The first script of each of the SDK's workflow threads (worker/workflow-threads.ts starts the threads
 * with it): it keeps the SDK from installing its promise hook there, then runs the SDK's own thread
 * script.
 *
 * Why: the SDK installs, unconditionally, a V8 promise hook that makes an `Error` for every promise a
 * workflow creates, only so that the `__stack_trace` query (the Temporal UI's "Stack Trace" tab) can
 * answer. Capturing that stack was a third of the workflow thread's CPU in a goal step (issue 25,
 * docs/performance.md). goalrun never asks for it; with the hook off the query answers "Workflow stack
 * traces are not enabled on this worker".
 */
import path from 'node:path';
import { workerData } from 'node:worker_threads';

/** The SDK's per-thread handlers, of which only the one we turn off is named. */
interface SdkGlobalHandlers {
  installed?: boolean;
  setPromiseHook?: () => void;
}

/** Where the SDK keeps its thread-wide handlers (the promise hook is installed from there). */
const VM_SHARED = path.join(path.dirname(require.resolve('@temporalio/worker')), 'workflow', 'vm-shared.js');

const { globalHandlers } = require(VM_SHARED) as { globalHandlers?: SdkGlobalHandlers };
// Another SDK version may have moved it: then the capture stays on, which costs CPU and breaks nothing
// (test/workflow/workflow-threads.test.ts fails on such an upgrade).
if (globalHandlers && typeof globalHandlers.setPromiseHook === 'function' && !globalHandlers.installed) {
  globalHandlers.setPromiseHook = () => undefined;
}

require((workerData as { sdkThreadScript: string }).sdkThreadScript);
