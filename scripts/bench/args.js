/**
 * Options of the benchmark scripts: node's parseArgs, with `--help` (the script's own header comment,
 * which says what it measures and how to call it) and a one-line error for a wrong option or value
 * instead of a stack trace. Exit codes: 0 after --help, 2 for a wrong option.
 */
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { parseArgs } = require('node:util');

/** A wrong option or value: runMain prints its message alone and exits 2. */
class UsageError extends Error {
  constructor(message) {
    super(message);
    this.name = 'UsageError';
  }
}

/** Throws a UsageError (the checks after parsing: `--steps must be an integer >= 2`). */
function usageError(message) {
  return new UsageError(message);
}

/** The leading doc comment of a script, as plain text. */
function headerOf(file) {
  const match = fs.readFileSync(file, 'utf8').match(/\/\*\*([\s\S]*?)\*\//);
  if (!match) return `${path.basename(file)}: no description`;
  return match[1]
    .split('\n')
    .map((line) => line.replace(/^\s*\* ?/, ''))
    .join('\n')
    .trim();
}

/** Prints a usage problem the way every benchmark does, and exits 2. */
function exitWithUsage(script, message) {
  console.error(`${path.basename(script)}: ${message} (--help describes the options)`);
  process.exit(2);
}

/**
 * parseArgs for a benchmark script (`script` is its __filename, `config` parseArgs's): on --help or -h prints the script's
 * header and exits 0; on an unknown option or a missing value names it and exits 2.
 */
function benchArgs(script, config) {
  const args = config.args ?? process.argv.slice(2);
  if (args.includes('--help') || args.includes('-h')) {
    console.log(headerOf(script));
    process.exit(0);
  }
  try {
    return parseArgs({ ...config, args });
  } catch (error) {
    return exitWithUsage(script, error.message);
  }
}

module.exports = { UsageError, usageError, benchArgs, exitWithUsage };
