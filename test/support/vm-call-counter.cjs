/**
 * Preloaded (`--require`) into a worker process by test/e2e/activation-calls.test.ts: counts the
 * calls into workflow contexts by the SDK function they run (activate, tryUnblockConditions,
 * concludeActivation…), per thread, and writes them to `$GOALRUN_TEST_VM_CALLS/<pid>-<thread>.json`
 * after every call: a workflow task's completion reaches the server after its calls were written.
 */
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const vm = require('node:vm');
const { threadId } = require('node:worker_threads');

const dir = process.env.GOALRUN_TEST_VM_CALLS;
if (dir) {
  const file = path.join(dir, `${process.pid}-${threadId}.json`);
  const counts = {};
  const runInContext = vm.Script.prototype.runInContext;
  vm.Script.prototype.runInContext = function counted(context, ...rest) {
    // The SDK names the function it calls in the context's __temporal_args before each call.
    const fn = String(context?.__temporal_args?.[1] ?? 'other');
    counts[fn] = (counts[fn] ?? 0) + 1;
    fs.writeFileSync(file, JSON.stringify(counts));
    return runInContext.call(this, context, ...rest);
  };
}
