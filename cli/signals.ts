/**
 * Ctrl-C and SIGTERM while a command follows a goal: the first one stops following (the goal goes
 * on in Temporal), a second one exits at once. Exit codes follow the shell's rule, 128 + the
 * signal's number: 130 for SIGINT, 143 for SIGTERM.
 */
import { constants } from 'node:os';

/** The signals that stop following. */
export const STOP_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM'];

/** 128 + the signal's number, as a shell reports a process ended by it. */
export function signalExitCode(signal: NodeJS.Signals): number {
  return 128 + (constants.signals[signal] ?? 0);
}

/** Resolves with the first SIGINT or SIGTERM; a second one exits the process at once. */
export function onInterrupt(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    let seen = false;
    const handler = (signal: NodeJS.Signals) => {
      if (seen) process.exit(signalExitCode(signal));
      seen = true;
      resolve(signal);
    };
    for (const signal of STOP_SIGNALS) process.on(signal, handler);
  });
}
