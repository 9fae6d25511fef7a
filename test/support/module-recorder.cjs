/**
 * A preload (`node --require`) that writes every module the process loads, one resolved path (or
 * built-in name) a line, to $GOALRUN_MODULE_RECORD when the process exits. Used to check which
 * modules a CLI command loads (test/e2e/cli-module-graph.test.ts, scripts/bench-cli.js).
 */
'use strict';
const fs = require('node:fs');
const Module = require('node:module');

const out = process.env.GOALRUN_MODULE_RECORD;
if (out) {
  const loaded = new Set();
  const load = Module._load;
  Module._load = function recordLoad(request, parent, isMain, ...rest) {
    try {
      loaded.add(Module._resolveFilename(request, parent, isMain));
    } catch {
      loaded.add(request);
    }
    return load.call(this, request, parent, isMain, ...rest);
  };
  // The CLI ends with process.exit, which still runs 'exit' listeners (synchronously).
  process.on('exit', () => fs.writeFileSync(out, [...loaded].join('\n')));
}
