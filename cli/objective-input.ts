/** The objective of `run` and `start`: the argument, or with `-` everything piped to stdin (as `claude -p -`). */
import fs from 'node:fs';
import { ConfigError } from '../core/errors';

/** The argument that asks for the objective from stdin. */
export const OBJECTIVE_FROM_STDIN = '-';

/** The objective a command was given; `-` reads stdin to its end. */
export function objectiveFrom(argument: string): string {
  if (argument !== OBJECTIVE_FROM_STDIN) return argument;
  if (process.stdin.isTTY) {
    throw new ConfigError(
      '"-" reads the objective from stdin, but stdin is a terminal: pipe the objective in',
    );
  }
  try {
    return fs.readFileSync(0, 'utf8');
  } catch (err) {
    throw new ConfigError(`could not read the objective from stdin: ${(err as Error).message}`);
  }
}
