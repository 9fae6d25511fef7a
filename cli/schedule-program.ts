/**
 * `goalrun schedule …` (issue 28 §3): goals started by a Temporal Schedule, on a cron or an interval,
 * each named `NAME-<time>`, with the options `start` takes. Handlers load on use (issue 10).
 */

import { type Command, Option } from 'commander';
import { DEFAULT_CATCHUP_WINDOW, OVERLAP_CHOICES } from '../core/goal-schedule';
import { goalOptionList, headlessOptionList } from './goal-options';
import { action, TASK_QUEUE_OPTION } from './program-shared';

const scheduleCommands = (): typeof import('./commands/schedule-commands') =>
  require('./commands/schedule-commands');
const scheduleAdd = (): typeof import('./commands/schedule-add-command') =>
  require('./commands/schedule-add-command');

/** What `schedule --help` and `schedule add --help` print after the options. */
const SCHEDULE_HELP = `
Each firing starts a goal named NAME-<time of the firing> (e.g. nightly-20261204T030000Z) with the
schedule's options, on the workers of this store: no goalrun process needs to stay open, only a
\`goalrun worker\`. Times are UTC. The schedule is a Temporal Schedule: the Web UI's Schedules page
shows it, and Temporal fires it even while no goalrun command runs.

While a goal of the schedule runs, a firing is skipped (--overlap skip), or one is kept to start when
it ends (--overlap buffer-one). A firing missed while the Temporal server was down still starts if
the server is back within the catch-up window (--catchup-window, default ${DEFAULT_CATCHUP_WINDOW}).

Examples:
  goalrun schedule add nightly --cron "0 3 * * *" "update the dependencies and make the tests pass" -w ./api
  goalrun schedule add triage --every 6h "label the new issues" --max-cost-usd 2 --overlap buffer-one
  goalrun schedule list
  goalrun schedule trigger nightly        # fire once now (the overlap policy still holds)
  goalrun schedule delete nightly         # cancels its running goal too
`;

/** Adds `schedule add|list|show|pause|unpause|trigger|delete`. */
export function registerScheduleCommands(program: Command): void {
  const schedule = program
    .command('schedule')
    .description('goals started on a cron or an interval by a Temporal Schedule (add, list, show, …)')
    .addHelpText('after', SCHEDULE_HELP);

  const add = schedule
    .command('add')
    .description('add a schedule that starts a goal NAME-<time> at each firing')
    .argument('<name>', 'the schedule\'s name: letters, digits, ".", "_", "-"')
    .argument('<objective>', 'what each goal should achieve ("-" reads it from stdin)')
    .option('--every <duration>', 'fire at this interval: 1m, 30m, 6h, 1d, 1w (from the Unix epoch, UTC)')
    .option(
      '--cron <spec>',
      'fire on this cron spec, UTC: "minute hour day-of-month month day-of-week" or @daily',
    )
    .option(
      '--time-zone <zone>',
      'with --cron: read the spec in this IANA zone, e.g. Europe/Berlin (default UTC)',
    )
    .addOption(
      new Option('--overlap <policy>', 'while a goal runs, skip a firing or keep one to run after it')
        .choices([...OVERLAP_CHOICES])
        .default('skip'),
    )
    .option(
      '--catchup-window <duration>',
      `start a firing missed while the Temporal server was down if it is back within this (default: ${DEFAULT_CATCHUP_WINDOW})`,
    )
    .option('--paused', 'add it paused: nothing fires until `goalrun schedule unpause NAME`');
  for (const option of [...goalOptionList(), ...headlessOptionList()]) add.addOption(option);
  add
    .option(...TASK_QUEUE_OPTION)
    .option('--json', 'print the schedule as `schedule show --json` does')
    .addHelpText('after', SCHEDULE_HELP)
    .action(
      action((context, name: string, objective: string, options) =>
        scheduleAdd().scheduleAddCommand(context, name, objective, options),
      ),
    );

  schedule
    .command('list')
    .description("this store's schedules: name, spec, next run, last goal, paused")
    .option(...TASK_QUEUE_OPTION)
    .option('--json', 'print as JSON')
    .action(action((context, options) => scheduleCommands().scheduleListCommand(context, options)));

  schedule
    .command('show')
    .description("a schedule's spec, policies, goal options, next runs and recent goals")
    .argument('<name>', 'the schedule')
    .option(...TASK_QUEUE_OPTION)
    .option('--json', 'print as JSON')
    .action(
      action((context, name: string, options) =>
        scheduleCommands().scheduleShowCommand(context, name, options),
      ),
    );

  for (const [verb, description] of [
    ['pause', 'stop firing until unpaused (a running goal goes on)'],
    ['unpause', 'fire again on the spec'],
  ] as const) {
    schedule
      .command(verb)
      .description(description)
      .argument('<name>', 'the schedule')
      .option(...TASK_QUEUE_OPTION)
      .action(
        action((context, name: string) =>
          scheduleCommands().schedulePauseCommand(context, name, verb === 'pause'),
        ),
      );
  }

  schedule
    .command('trigger')
    .description(
      "fire once now, under the schedule's overlap policy (skipped while its goal runs, with skip)",
    )
    .argument('<name>', 'the schedule')
    .option(...TASK_QUEUE_OPTION)
    .option('--json', 'print what the firing did as JSON')
    .action(
      action((context, name: string, options) =>
        scheduleCommands().scheduleTriggerCommand(context, name, options),
      ),
    );

  schedule
    .command('delete')
    .description('delete the schedule, and cancel the goal of it that runs (it saves its checkpoint first)')
    .argument('<name>', 'the schedule')
    .option(...TASK_QUEUE_OPTION)
    .action(action((context, name: string) => scheduleCommands().scheduleDeleteCommand(context, name)));
}
