/**
 * What the command registrations (the *-program.ts files) share: the wrapper every action runs in,
 * the one-line error report, and the arguments and options many commands take.
 */
import { ConfigError } from '../core/errors';
import type { CliContext } from './context';
import { ExitCode } from './exit-codes';
import { notice } from './output';

/** The option every command that names a goal takes instead of an id. */
export const LAST_OPTION = ['--last', 'the newest goal of the current directory (instead of an id)'] as const;
/** How commands describe their id argument. */
export const ID_HELP =
  'session id, a unique prefix of it, workflow id, session name, or the short id `list` prints';
/** `--name` of run and start: get or create the project's session of that name. */
export const NAME_OPTION = [
  '--name <name>',
  "the project's session of this name: started if new, continued with the objective as an instruction if stopped (refused while it runs)",
] as const;
/** The option that overrides the task queue derived from the store. */
export const TASK_QUEUE_OPTION = [
  '--task-queue <name>',
  'task queue of the workers (default: goalrun-<store id>, or GOALRUN_TASK_QUEUE / config task_queue)',
] as const;

// Loaded when a command runs, not when the program is built: `--help` never loads the settings (issue 10).
const contextModule = (): typeof import('./context') => require('./context');

/** Wraps a command action: settings and resources per invocation, errors as one clear line. */
export function action<A extends unknown[]>(handler: (context: CliContext, ...args: A) => Promise<number>) {
  return async (...args: A) => {
    let context: CliContext | undefined;
    let code: number;
    try {
      // Commander passes the options object just before the command itself.
      const options = args.at(-2) as { taskQueue?: string; workspace?: string } | undefined;
      const workspace = options && typeof options === 'object' ? options.workspace : undefined;
      // `--profile` is the program's own option: it may come before or after the command's name.
      const command = args.at(-1) as { optsWithGlobals?: () => { profile?: string } } | undefined;
      const profile = command?.optsWithGlobals?.().profile;
      context = new (contextModule().CliContext)(contextModule().settingsFor(workspace, profile));
      if (options && typeof options === 'object') context.overrideTaskQueue(options.taskQueue);
      code = await handler(context, ...args);
    } catch (err) {
      code = reportError(err);
    }
    await context?.close().catch(() => undefined);
    process.exit(code);
  };
}

/** Prints an error as one line; configuration problems exit 2, everything else 1. */
export function reportError(err: unknown): number {
  if (err instanceof ConfigError) {
    notice(err.message);
    return ExitCode.usage;
  }
  const message = (err as Error)?.message ?? String(err);
  notice(`error: ${message}`);
  if (process.env.GOALRUN_DEBUG) console.error(err);
  return ExitCode.failedOrBlocked;
}

/**
 * The goal and the words of a command that takes an id and then text: with --last there is no id,
 * so the first word commander took for one belongs to the text.
 */
export function idAndWords(
  id: string | undefined,
  words: string[],
  options: { last?: boolean },
): [string | undefined, string[]] {
  if (!options.last) return [id, words];
  return [undefined, id === undefined ? words : [id, ...words]];
}
