/**
 * workflows/promise-stacks.ts, as the bundle preloads it: in a realm of its own (the workflow
 * isolate's), the SDK promise hook's stack capture formats to nothing, so the hook keeps nothing,
 * while an error thrown by workflow code keeps a stack. And the built bundles preload it.
 */
import fs from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';

const DIST = path.resolve(__dirname, '../../dist');
/** Where the SDK's promise hook lives: its `new Error()` has its top frame there. */
const HOOK_FILE = path.resolve(__dirname, '../../node_modules/@temporalio/worker/lib/workflow/vm-shared.js');

function isolateWithModule(): vm.Context {
  const context = vm.createContext({ exports: {} });
  const code = fs.readFileSync(path.join(DIST, 'workflows/promise-stacks.js'), 'utf8');
  vm.runInContext(code, context, { filename: 'workflow-bundle.js' });
  return context;
}

describe('the workflow isolate stack format', () => {
  it("gives the SDK promise hook's capture an empty stack", () => {
    const context = isolateWithModule();
    const ErrorCtor = vm.runInContext('Error', context) as ErrorConstructor;
    // The hook's own code, as the SDK runs it (from its file, with the isolate's Error).
    const hook = vm.runInThisContext('(function init(ErrorCtor) { return new ErrorCtor().stack; })', {
      filename: HOOK_FILE,
    }) as (ctor: ErrorConstructor) => string;
    expect(hook(ErrorCtor)).toBe('');
  });

  it('keeps the stack of an error thrown by workflow code, in the plain format', () => {
    const context = isolateWithModule();
    const stack = vm.runInContext('function step() { return new Error("no tool") } step().stack', context, {
      filename: 'workflow-bundle.js',
    }) as string;
    expect(stack).toMatch(/^Error: no tool\n {4}at step \(workflow-bundle\.js:1:\d+\)/);
  });

  it('is preloaded by both built bundles', () => {
    for (const file of ['workflow-bundle.js', 'workflow-bundle-encrypted.js']) {
      const code = fs.readFileSync(path.join(DIST, file), 'utf8');
      expect(code).toContain('Error.prepareStackTrace = prepareWorkflowStack');
      expect(code).toMatch(/preloadModules\(\) \{\n\s+__webpack_require__\(.*promise-stacks\.js/);
    }
  });
});
