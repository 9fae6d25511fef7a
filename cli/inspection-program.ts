/**
 * The commands that look at goals: `status`, `tasks`, the context commands (`compact`, `policy`,
 * `stats`), `list` and `upgrade-check`.
 */
import { type Command, Option } from 'commander';
import { action, ID_HELP, idAndWords, LAST_OPTION, TASK_QUEUE_OPTION } from './program-shared';

// Handlers load on use: these light commands never load the worker or a provider (issue 10;
// test/e2e/cli-module-graph.test.ts keeps it so).
const statusCommands = (): typeof import('./commands/status-commands') =>
  require('./commands/status-commands');
const tasksCommands = (): typeof import('./commands/tasks-command') => require('./commands/tasks-command');
const contextCommands = (): typeof import('./commands/context-commands') =>
  require('./commands/context-commands');
const upgradeCheckCommands = (): typeof import('./commands/upgrade-check-command') =>
  require('./commands/upgrade-check-command');

/** Adds `status`, `tasks`, `compact`, `policy`, `stats`, `list` and `upgrade-check`. */
export function registerInspectionCommands(program: Command): void {
  program
    .command('status')
    .description('show a goal: status, counters, usage, last tool')
    .argument('[id]', ID_HELP)
    .option(...LAST_OPTION)
    .option('--json', 'print as JSON')
    .action(
      action((context, id: string | undefined, options) =>
        statusCommands().statusCommand(context, id, options),
      ),
    );

  program
    .command('tasks')
    .description("show a goal's task graph: status, what blocks each task, what is ready")
    .argument('[id]', ID_HELP)
    .option(...LAST_OPTION)
    .option('--json', 'print as JSON (tasks in dependency order with blocked_by and ready)')
    .action(
      action((context, id: string | undefined, options) =>
        tasksCommands().tasksCommand(context, id, options),
      ),
    );

  program
    .command('compact')
    .description("compact a running goal's context now: prune old tool outputs, then summarize")
    .argument('[id]', `${ID_HELP} (left out with --last)`)
    .argument('[topic...]', 'what the summary should focus on')
    .option(...LAST_OPTION)
    .option(
      '--json',
      'print {stage, beforeTokens, afterTokens, note}; exits 1 when it failed or was discarded',
    )
    .action(
      action((context, id: string | undefined, topic: string[], options) => {
        const [goal, words] = idAndWords(id, topic, options);
        return contextCommands().compactCommand(context, goal, words, options);
      }),
    );

  program
    .command('policy')
    .description('show the context policy: window, threshold, used, status, auto-compact, failures')
    .argument('[id]', ID_HELP)
    .option(...LAST_OPTION)
    .addOption(
      new Option('--auto-compact <state>', 'turn auto-compact on or off for a running goal').choices([
        'on',
        'off',
      ]),
    )
    .option('--json', 'print as JSON')
    .action(
      action((context, id: string | undefined, options) =>
        contextCommands().policyCommand(context, id, options),
      ),
    );

  program
    .command('stats')
    .description('show token usage and cost per model, summarizer calls included')
    .argument('[id]', ID_HELP)
    .option(...LAST_OPTION)
    .option('--json', 'print as JSON')
    .action(
      action((context, id: string | undefined, options) =>
        contextCommands().statsCommand(context, id, options),
      ),
    );

  program
    .command('list')
    .description('list goals, newest first')
    .option('--limit <n>', 'how many', '20')
    .option(...TASK_QUEUE_OPTION)
    .option('--json', 'print as JSON')
    .action(action((context, options) => statusCommands().listCommand(context, options)));

  program
    .command('upgrade-check')
    .description(
      'list the open goals started by builds N or more releases older than this one (read from their patch markers)',
    )
    .option(
      '--releases <n>',
      'how many releases behind a goal must be to be listed (0: every open goal)',
      '1',
    )
    .option('--json', 'print as JSON')
    .action(action((context, options) => upgradeCheckCommands().upgradeCheckCommand(context, options)));
}
