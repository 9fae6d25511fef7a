/**
 * The benchmarks' model: the OpenAI-compatible test server of the test suite
 * (test/support/openai-test-server.ts, real HTTP and SSE), compiled here with TypeScript's
 * transpiler because test/ is not part of the build, scripted to answer every request after a
 * fixed delay: a cheap tool call until the goal's last step, then `finish`.
 */
'use strict';

const fs = require('node:fs');
const Module = require('node:module');
const path = require('node:path');
const { ROOT } = require('./support');

/** Loads test/support/openai-test-server.ts as a CommonJS module. */
function loadTestServer() {
  const ts = require('typescript');
  const file = path.join(ROOT, 'test/support/openai-test-server.ts');
  const { outputText } = ts.transpileModule(fs.readFileSync(file, 'utf8'), {
    compilerOptions: {
      module: ts.ModuleKind.CommonJS,
      target: ts.ScriptTarget.ES2022,
      esModuleInterop: true,
    },
    fileName: file,
  });
  const compiled = new Module(file, module);
  compiled.filename = file;
  compiled.paths = Module._nodeModulePaths(path.dirname(file));
  compiled._compile(outputText, file);
  return compiled.exports;
}

/**
 * Starts the model: each goal takes `steps` model steps, each answered after `delayMs`; steps
 * 1..steps-1 make the tool call `tool(step)` ({name, args}), the last one calls `finish`.
 */
async function startModelServer({ steps, delayMs, tool }) {
  const { requestStep, startOpenAITestServer } = loadTestServer();
  const usage = { prompt_tokens: 1000, completion_tokens: 20 };
  const server = await startOpenAITestServer({
    fallback: (body) =>
      requestStep(body) < steps
        ? { toolCalls: [tool(requestStep(body))], delayMs, usage }
        : { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'done' } }], delayMs, usage },
  });
  return server;
}

module.exports = { loadTestServer, startModelServer };
