/** How a command that follows a goal (`run`, `watch`, `resume`) prints it: text, json or stream-json. */
import { ConfigError } from '../core/errors';
import type { CliContext } from './context';
import type { FollowOptions } from './follow';
import { outputFormatOf } from './output-format';
import { StreamLease } from './partial-messages';

/**
 * How to follow a goal: the output format from --output-format / --json, and for stream-json where
 * the stream starts (`start`: the whole session; `now`: only what comes next).
 */
export async function followOptions(
  context: CliContext,
  sessionId: string,
  options: {
    json?: boolean;
    outputFormat?: string;
    fromStart?: boolean;
    after?: string;
    includePartialMessages?: boolean;
  },
  interrupted: Promise<NodeJS.Signals>,
  from: 'start' | 'now',
): Promise<FollowOptions> {
  const format = outputFormatOf(options);
  options.json = format !== 'text';
  const after = afterCursor(options);
  if (format !== 'stream-json') {
    if (after !== undefined) throw new ConfigError('--after needs --output-format stream-json');
    if (options.includePartialMessages) {
      throw new ConfigError('--include-partial-messages needs --output-format stream-json');
    }
    return { json: format === 'json', interrupted };
  }
  const fromCursor =
    after ??
    (from === 'start' || options.fromStart ? 0 : await (await context.sessionStore()).lastEventId(sessionId));
  const partialMessages = options.includePartialMessages === true;
  // Taken before a run starts its goal, so that its first step already streams its text.
  if (partialMessages) await new StreamLease(await context.sessionStore(), sessionId).renew();
  // A run starts the execution, which logs its own init: the stream opens with it. A watch, even
  // --from-start, opens with the session as it is now.
  return { json: true, interrupted, stream: { fromCursor, awaitInit: from === 'start', partialMessages } };
}

/** The cursor of `--after`, checked: a whole number, and not with --from-start. */
function afterCursor(options: { fromStart?: boolean; after?: string }): number | undefined {
  if (options.after === undefined) return undefined;
  if (options.fromStart) throw new ConfigError('give --from-start or --after, not both');
  const cursor = Number(options.after);
  if (!/^\d+$/.test(options.after.trim()) || !Number.isSafeInteger(cursor)) {
    throw new ConfigError(`--after must be an event's cursor (a whole number), got "${options.after}"`);
  }
  return cursor;
}
