/** The commands that steer a running goal (issue F-CMDS): `steer`, one verb per app command, approvals. */
import type { Command } from 'commander';
import { ConfigError } from '../core/errors';
import { action, ID_HELP, idAndWords, LAST_OPTION } from './program-shared';

// Handlers load on use, so `goalrun --help` and the light commands stay fast (issue 10).
const steer = async (): Promise<typeof import('./commands/steer-commands')> =>
  require('./commands/steer-commands');

/**
 * Adds `steer`, `pause`, `unpause`, `clear`, `limits`, `model`, `rename`, `jobs`, `transcript`,
 * `approve` and `deny`.
 */
export function registerSteeringCommands(program: Command): void {
  const goalCommand = (name: string, description: string) =>
    program
      .command(name)
      .description(description)
      .argument('[id]', ID_HELP)
      .option(...LAST_OPTION)
      .option('--json', 'print the outcome as JSON');

  program
    .command('steer')
    .description(
      'send a message to a running goal, delivered before its next step (a text starting with / is an app command; try /help)',
    )
    .argument('[id]', `${ID_HELP} (left out with --last)`)
    .argument('[text...]', 'the message, or an app command such as "/limits max_steps=80"')
    .option(...LAST_OPTION)
    .option('--json', 'print the outcome as JSON')
    .action(
      action(async (context, id: string | undefined, words: string[], options) => {
        const [goal, text] = idAndWords(id, words, options);
        return (await steer()).steerCommand(context, goal, text, options);
      }),
    );

  const verbs: Array<[string, string]> = [
    ['pause', 'finish the current step, then wait (the time limit stops too) until unpause'],
    ['unpause', 'let a paused goal go on'],
    ['clear', 'end the session as cleared and start a fresh one with the same objective and workspace'],
  ];
  for (const [name, description] of verbs) {
    goalCommand(name, description).action(
      action(async (context, id: string | undefined, options) =>
        (await steer()).commandVerb(name)(context, id, options),
      ),
    );
  }

  goalCommand('limits', 'raise or lower the limits of a running goal, also one waiting at a limit')
    .option('--max-steps <n>', 'the step limit')
    .option('--max-iterations <n>', 'the iteration limit')
    .option('--max-minutes <n>', 'the time limit')
    .option('--max-cost-usd <usd>', 'the money cap in US dollars (a goal in budget_reached goes on)')
    .option('--max-tokens <n>', 'the token cap (a goal in budget_reached goes on)')
    .action(
      action(async (context, id: string | undefined, options) =>
        (await steer()).limitsCommand(context, id, options),
      ),
    );

  for (const [name, argument, description] of [
    ['model', '<spec>', 'use another model from the next step on (e.g. anthropic:claude-sonnet-4-5)'],
    ['rename', '<name...>', 'give the session a name'],
  ] as const) {
    program
      .command(name)
      .description(description)
      .argument('[id]', `${ID_HELP} (left out with --last)`)
      .argument(`[${argument.slice(1, -1)}]`, name === 'model' ? 'model specifier' : 'the new name')
      .option(...LAST_OPTION)
      .option('--json', 'print the outcome as JSON')
      .action(
        action(async (context, id: string | undefined, words: string | string[] | undefined, options) => {
          const [goal, text] = idAndWords(id, [words ?? []].flat(), options);
          if (text.length === 0) {
            throw new ConfigError(
              `give the ${name === 'model' ? 'model specifier' : 'new name'}: goalrun ${name} <id> ${argument}`,
            );
          }
          return (await steer()).argumentVerb(name)(context, goal, text, options);
        }),
      );
  }

  goalCommand('jobs', "list a running goal's background jobs: id, status, command, elapsed time").action(
    action(async (context, id: string | undefined, options) =>
      (require('./commands/jobs-command') as typeof import('./commands/jobs-command')).jobsCommand(
        context,
        id,
        options,
      ),
    ),
  );

  program
    .command('transcript')
    .description('print the session: messages, tool calls, results, summaries and steering, in order')
    .argument('[id]', ID_HELP)
    .option(...LAST_OPTION)
    .option('--format <format>', 'md (for people) or jsonl (one stored message per line)', 'md')
    .option('--full', 'expand spooled tool outputs in full')
    .action(
      action(async (context, id: string | undefined, options) =>
        (
          require('./commands/transcript-command') as typeof import('./commands/transcript-command')
        ).transcriptCommand(context, id, options),
      ),
    );

  goalCommand(
    'approve',
    'let the command the goal waits on run outside the sandbox, or sign off a goal awaiting_user (it is completed)',
  ).action(
    action(async (context, id: string | undefined, options) =>
      (await steer()).approvalVerb('approve')(context, id, options),
    ),
  );
  goalCommand(
    'deny',
    'refuse the command the goal waits on, or the sign-off of a goal awaiting_user (it goes back to work); the model is told why',
  )
    .option('--reason <text>', 'why, for the model')
    .action(
      action(async (context, id: string | undefined, options) =>
        (await steer()).approvalVerb('deny')(context, id, options),
      ),
    );
}
