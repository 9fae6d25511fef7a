/**
 * Which tool calls waited on purpose (issue 26.2): a model that polls something slow (a deploy, a CI
 * run) honestly gets the same answer many times, so the runaway breaker counts such repeats against
 * its higher `wait_limit`, not `repeat_limit`. The rule: a `bash` command whose `sleep`s add up to
 * WAITING_CALL_MIN_SECONDS or more (`sleep 30`, `sleep 1m`, `sleep 5; x; sleep 5`), or a `job-output`
 * with `wait_seconds` of that many or more (what it asked, however soon the job answered). Pure, read
 * from the call's arguments by the tool activity.
 */
import { TOOL } from './tool-names';

/** A call that waited at least this long is waiting, not looping. */
export const WAITING_CALL_MIN_SECONDS = 10;

/** `sleep N`, `sleep 1.5m`, `sleep 10s` (GNU suffixes s, m, h, d), as a word of the command. */
const SLEEP = /(?:^|[\s;&|(`])sleep\s+(\d+(?:\.\d+)?)([smhd]?)(?=$|[\s;&|)`])/g;
const SECONDS_PER_UNIT: Readonly<Record<string, number>> = { '': 1, s: 1, m: 60, h: 3600, d: 86_400 };

/** How many seconds of `sleep` a shell command names in all. */
export function sleepSecondsOf(command: string): number {
  let seconds = 0;
  for (const match of command.matchAll(SLEEP)) {
    seconds += Number(match[1]) * (SECONDS_PER_UNIT[match[2]] ?? 1);
  }
  return seconds;
}

/** Whether a workspace tool call (its name and raw arguments) waited on purpose. */
export function isWaitingCall(toolName: string, input: unknown): boolean {
  if (typeof input !== 'object' || input === null) return false;
  if (toolName === TOOL.jobOutput) {
    const wait = (input as { wait_seconds?: unknown }).wait_seconds;
    return typeof wait === 'number' && wait >= WAITING_CALL_MIN_SECONDS;
  }
  if (toolName !== TOOL.bash) return false;
  const command = (input as { command?: unknown }).command;
  return typeof command === 'string' && sleepSecondsOf(command) >= WAITING_CALL_MIN_SECONDS;
}
