/**
 * The cheap tool call a benchmark goal makes each step. Each step's call and answer differ from every
 * other step's (`echo <n>`, or a file of its own): the runaway breaker pauses a goal that repeats a
 * call and answer, and a paused goal would leave the benchmark waiting forever.
 */
'use strict';

const fs = require('node:fs');
const path = require('node:path');

/** The tools a benchmark can make its cheap call with. */
const CHEAP_TOOLS = ['bash', 'file-read'];

/**
 * Step `n`'s call. file-read reads a small file in the activity itself; bash also forks a process
 * from the worker, which on a busy 2-core machine costs tens of ms of its main thread per call.
 */
function cheapCall(tool, n) {
  return tool === 'bash'
    ? { name: 'bash', args: { command: `echo ${n}` } }
    : { name: 'file-read', args: { path: noteName(n) } };
}

function noteName(n) {
  return `note-${n}.txt`;
}

/** Writes the small files the file-read calls of steps 1..steps read into `workspace`. */
function writeNotes(workspace, steps) {
  for (let n = 1; n <= steps; n++) {
    fs.writeFileSync(path.join(workspace, noteName(n)), `a small file for file-read, step ${n}\n`);
  }
}

module.exports = { CHEAP_TOOLS, cheapCall, noteName, writeNotes };
