/**
 * The actions of `goalrun serve` (approve, deny, steer, pause, unpause, limits, cancel): each one runs
 * this goalrun's own command as a subprocess, so it goes through the same validated path as the CLI,
 * and is recorded as sent from `web`. Every value the request brings is checked here first, and goes
 * to the command as one argument, never through a shell.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';

/** The actions a POST may name. */
export const SERVE_ACTIONS = ['approve', 'deny', 'steer', 'pause', 'unpause', 'limits', 'cancel'] as const;

/** An action of the page. */
export type ServeAction = (typeof SERVE_ACTIONS)[number];

/** Longest steering message or reason taken from the page. */
export const SERVE_TEXT_MAX_CHARS = 8_000;
/** How long one action may take (approve waits up to 30 s for a worker). */
const ACTION_TIMEOUT_MS = 60_000;
/** Who the goal's transcript says a web action came from. */
export const WEB_SENDER = 'web';

/** A goal id as the CLI prints it: never an option, never a path. */
const GOAL_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const NUMBER = /^\d+(\.\d+)?$/;

/** A request that cannot become a command: the reason, for a 400. */
export class BadAction extends Error {
  readonly type = 'BadAction';
}

/** The command line of an action, from the request's JSON body. */
export function actionArgs(action: string, id: string, body: Record<string, unknown>): string[] {
  if (!(SERVE_ACTIONS as readonly string[]).includes(action))
    throw new BadAction(`unknown action "${action}"; one of ${SERVE_ACTIONS.join(', ')}`);
  if (!GOAL_ID.test(id)) throw new BadAction(`"${id}" is not a goal id`);
  const text = (key: string, required: boolean): string | undefined => {
    const value = body[key];
    if (value === undefined || value === null || value === '') {
      if (required) throw new BadAction(`${action} needs "${key}"`);
      return undefined;
    }
    if (typeof value !== 'string') throw new BadAction(`"${key}" must be text`);
    if (value.length > SERVE_TEXT_MAX_CHARS)
      throw new BadAction(`"${key}" is over ${SERVE_TEXT_MAX_CHARS} characters`);
    return value;
  };
  switch (action as ServeAction) {
    case 'steer':
      return ['steer', id, '--json', '--', text('text', true) as string];
    case 'deny': {
      const reason = text('reason', false);
      return ['deny', id, '--json', ...(reason ? ['--reason', reason] : [])];
    }
    case 'limits': {
      const flags: string[] = [];
      for (const [key, flag] of [
        ['maxCostUsd', '--max-cost-usd'],
        ['maxSteps', '--max-steps'],
        ['maxMinutes', '--max-minutes'],
        ['maxIterations', '--max-iterations'],
        ['maxTokens', '--max-tokens'],
      ] as const) {
        const value = body[key];
        if (value === undefined || value === null || value === '') continue;
        const shown = String(value);
        if (!NUMBER.test(shown)) throw new BadAction(`"${key}" must be a positive number`);
        flags.push(flag, shown);
      }
      if (flags.length === 0)
        throw new BadAction('limits needs one of maxCostUsd, maxSteps, maxMinutes, maxIterations, maxTokens');
      return ['limits', id, '--json', ...flags];
    }
    case 'cancel':
      return ['cancel', id];
    default:
      return [action, id, '--json'];
  }
}

/** What an action did: the command's answer, or its error. */
export interface ActionOutcome {
  ok: boolean;
  text: string;
}

/** Runs an action's command with this process's environment (the same store and server). */
export function runAction(args: readonly string[]): Promise<ActionOutcome> {
  const main = path.join(__dirname, '..', 'main.js');
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [main, ...args],
      {
        env: { ...process.env, GOALRUN_STEER_FROM: WEB_SENDER },
        timeout: ACTION_TIMEOUT_MS,
        maxBuffer: 1024 * 1024,
      },
      (err, stdout, stderr) => {
        const said = stdout.trim();
        if (!err) return resolve({ ok: true, text: answerText(said) });
        resolve({
          ok: false,
          text: stderr.trim().replace(/^goalrun: /, '') || said || (err as Error).message,
        });
      },
    );
  });
}

/** The store's schedules, as `goalrun schedule list --json` gives them (an empty list when none can be read). */
export function listSchedules(): Promise<unknown[]> {
  const main = path.join(__dirname, '..', 'main.js');
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [main, 'schedule', 'list', '--json'],
      { timeout: ACTION_TIMEOUT_MS },
      (err, stdout) => {
        if (err) return resolve([]);
        try {
          const parsed = JSON.parse(stdout) as { schedules?: unknown[] };
          resolve(Array.isArray(parsed.schedules) ? parsed.schedules : []);
        } catch {
          resolve([]);
        }
      },
    );
  });
}

/** The readable part of a command's `--json` answer, or its text. */
function answerText(stdout: string): string {
  try {
    const answer = JSON.parse(stdout) as { text?: string; result?: { text?: string }; delivery?: string };
    return answer.text ?? answer.result?.text ?? (answer.delivery ? `message ${answer.delivery}` : stdout);
  } catch {
    return stdout;
  }
}
