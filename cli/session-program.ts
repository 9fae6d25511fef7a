/** The commands over the stored sessions of a project: `fork`, `sessions`, `clean` and `search`. */
import type { Command } from 'commander';
import { action } from './program-shared';

// Handlers load on use, so `goalrun --help` stays fast (issue 10).
const forkCommand = (): typeof import('./commands/fork-command') => require('./commands/fork-command');
const sessionsCommand = (): typeof import('./commands/sessions-command') =>
  require('./commands/sessions-command');
const cleanCommand = (): typeof import('./commands/clean-command') => require('./commands/clean-command');
const searchCommand = (): typeof import('./commands/search-command') => require('./commands/search-command');

/** Adds `fork`, `sessions`, `clean` and `search`. */
export function registerSessionCommands(program: Command): void {
  program
    .command('fork <id>')
    .description('a new stopped session from a session up to a step, its git workspace rewound to that step')
    .option(
      '--at-step <n>',
      'the last step the fork keeps (default: the last step), as watch and transcript number them',
    )
    .option('--name <name>', 'a name for the fork')
    .option('--workspace <dir>', 'where the worktree of the fork goes (default: <workspace>-fork-<short id>)')
    .option('--json', 'print {sessionId, workflowId, workspace, forkedFrom, atStep}')
    .action(action(async (context, id, options) => forkCommand().forkCommand(context, id, options)));

  program
    .command('sessions')
    .description("list this project's sessions: name, id, status, steps, cost, last activity, objective")
    .option('--all', "every project's sessions")
    .option('--json', 'print as JSON')
    .action(action(async (context, options) => sessionsCommand().sessionsCommand(context, options)));

  program
    .command('clean')
    .description('remove old stopped sessions (a dry run unless --yes); never a running one')
    .option('--older-than <duration>', 'only sessions idle longer than this: 30d, 12h, 90m, 2w')
    .option('--keep <n>', 'stopped sessions kept per project, newest first (default 5)')
    .option('--project <dir>', "this project's sessions (default: the current directory's)")
    .option('--all', "every project's sessions")
    .option('--include-named', 'named sessions too (kept by default)')
    .option('--yes', 'remove them (without it: only list what would go)')
    .option('--json', 'print {dryRun, sessions} as JSON')
    .option(
      '--schedule',
      'show the daily clean a configured retention runs (with --yes: sync it with the config first)',
    )
    .action(action(async (context, options) => cleanCommand().cleanCommand(context, options)));

  program
    .command('search')
    .description("search this project's sessions (messages, summaries, tool results) by words")
    .argument('<text>', 'words to look for; "a phrase", -word and or work as in a web search')
    .option('--all', "search every project's sessions")
    .option('--limit <n>', 'matches to show at most', '20')
    .option('--json', 'print the matches as JSON')
    .action(
      action(async (context, text: string, options) => searchCommand().searchCommand(context, text, options)),
    );
}
