/**
 * App commands (spec F-CMDS): a steering text that starts with `/` is handled by goalrun and never
 * sent to the model. Parsing is pure, so the update validator can reject a bad command before it is
 * accepted, with a message that lists what would have worked.
 */

/** A parsed app command. */
export type AppCommand =
  | { name: 'compact'; topic?: string }
  | { name: 'pause' }
  | { name: 'unpause' }
  | { name: 'limits'; limits: LimitsPatch }
  | { name: 'model'; model: string }
  | { name: 'rename'; title: string }
  | { name: 'clear' }
  | { name: 'jobs' }
  | { name: 'help' };

/** Limits a running goal may change; each one is optional. */
export interface LimitsPatch {
  maxSteps?: number;
  maxIterations?: number;
  maxMinutes?: number;
  maxCostUsd?: number;
  maxTokens?: number;
}

/** The commands, with one line of help each, in the order `/help` lists them. */
export const APP_COMMANDS: ReadonlyArray<{ name: AppCommand['name']; usage: string; help: string }> = [
  {
    name: 'compact',
    usage: '/compact [topic]',
    help: 'compact the context now, optionally focused on a topic',
  },
  { name: 'pause', usage: '/pause', help: 'finish the current step, then wait (the time limit stops too)' },
  { name: 'unpause', usage: '/unpause', help: 'go on after /pause' },
  {
    name: 'limits',
    usage: '/limits max_steps=N max_iterations=N max_minutes=N max_cost_usd=N max_tokens=N',
    help: 'raise or lower limits, also of a goal waiting at a limit',
  },
  { name: 'model', usage: '/model SPEC', help: 'use another model from the next step on' },
  { name: 'rename', usage: '/rename NAME', help: 'give the session a name' },
  {
    name: 'clear',
    usage: '/clear',
    help: 'end this session as cleared and start a fresh one with the same objective',
  },
  { name: 'jobs', usage: '/jobs', help: 'list background jobs' },
  { name: 'help', usage: '/help', help: 'list these commands' },
];

/** The `/limits` keys and the limit each one sets. */
const LIMIT_KEYS: Record<string, keyof LimitsPatch> = {
  max_steps: 'maxSteps',
  max_iterations: 'maxIterations',
  max_minutes: 'maxMinutes',
  max_cost_usd: 'maxCostUsd',
  max_tokens: 'maxTokens',
};

/** The longest session name /rename accepts. */
export const MAX_SESSION_NAME_CHARS = 120;

/** Thrown for a text that is not a valid app command; the message says what is wrong and what works. */
export class AppCommandError extends Error {
  readonly type = 'AppCommandError';
  constructor(message: string) {
    super(message);
    this.name = 'AppCommandError';
  }
}

/** Whether a steering text is an app command rather than a message for the model. */
export function isAppCommand(text: string): boolean {
  return text.trimStart().startsWith('/');
}

/** Parses an app command; throws AppCommandError naming the problem. */
export function parseAppCommand(text: string): AppCommand {
  const trimmed = text.trim();
  const match = /^\/(\S*)\s*([\s\S]*)$/.exec(trimmed);
  const name = match?.[1] ?? '';
  const rest = (match?.[2] ?? '').trim();
  switch (name) {
    case 'compact':
      return rest ? { name: 'compact', topic: rest } : { name: 'compact' };
    case 'pause':
    case 'unpause':
    case 'clear':
    case 'jobs':
    case 'help':
      if (rest) throw new AppCommandError(`/${name} takes no arguments (got "${rest}")`);
      return { name };
    case 'limits':
      return { name: 'limits', limits: parseLimits(rest) };
    case 'model':
      if (!rest || /\s/.test(rest))
        throw new AppCommandError('usage: /model SPEC, e.g. /model openai:gpt-4o');
      return { name: 'model', model: rest };
    case 'rename': {
      if (!rest) throw new AppCommandError('usage: /rename NAME');
      if (rest.length > MAX_SESSION_NAME_CHARS) {
        throw new AppCommandError(`a session name is at most ${MAX_SESSION_NAME_CHARS} characters`);
      }
      return { name: 'rename', title: rest.replace(/\s+/g, ' ') };
    }
    default:
      throw new AppCommandError(
        `unknown command "/${name}"; known commands: ${APP_COMMANDS.map((c) => `/${c.name}`).join(', ')}`,
      );
  }
}

/** Parses `max_steps=N max_iterations=N max_minutes=N` (at least one). */
export function parseLimits(text: string): LimitsPatch {
  const usage = APP_COMMANDS.find((command) => command.name === 'limits')?.usage ?? '';
  if (!text) throw new AppCommandError(`usage: ${usage}`);
  const patch: LimitsPatch = {};
  for (const pair of text.split(/\s+/)) {
    const [key, value, extra] = pair.split('=');
    const field = LIMIT_KEYS[key ?? ''];
    if (!field || value === undefined || extra !== undefined) {
      throw new AppCommandError(`bad limit "${pair}"; usage: ${usage}`);
    }
    if (field === 'maxCostUsd') {
      patch.maxCostUsd = parseDollars(value, key);
      continue;
    }
    if (!/^\d+$/.test(value) || Number(value) <= 0 || !Number.isSafeInteger(Number(value))) {
      throw new AppCommandError(`${key} must be a positive whole number, got "${value}"`);
    }
    patch[field] = Number(value);
  }
  return patch;
}

/** A positive amount of US dollars (`0.50`, `12`); throws AppCommandError naming `key`. */
export function parseDollars(value: string, key: string): number {
  const amount = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value) || !Number.isFinite(amount) || amount <= 0) {
    throw new AppCommandError(`${key} must be a positive amount of US dollars such as 0.50, got "${value}"`);
  }
  return amount;
}

/** The text of `/help`. */
export function appCommandHelp(): string {
  const width = Math.max(...APP_COMMANDS.map((command) => command.usage.length));
  return APP_COMMANDS.map((command) => `${command.usage.padEnd(width)}  ${command.help}`).join('\n');
}
