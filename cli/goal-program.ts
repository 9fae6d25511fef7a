/**
 * The commands of a goal's life: `run` and `start` begin one; `watch`, `cancel` and `resume` follow
 * it, stop it and continue it.
 */

import { type Command, Option } from 'commander';
import { goalOptionList, headlessOptionList, limitOptionList, trustOptionList } from './goal-options';
import { outputFormatOption, partialMessagesOption } from './output-format';
import { action, ID_HELP, LAST_OPTION, NAME_OPTION, TASK_QUEUE_OPTION } from './program-shared';
import { addTraceContentOption } from './tracing';

// Handlers load on use, so `goalrun --help` and `run --help` never load the worker (issue 10).
const startCommands = (): typeof import('./commands/start-commands') => require('./commands/start-commands');
const resumeCommand = (): typeof import('./commands/resume-command') => require('./commands/resume-command');
const inspectCommands = (): typeof import('./commands/inspect-commands') =>
  require('./commands/inspect-commands');

/** Adds `run` and `start`. */
export function registerStartCommands(program: Command): void {
  const run = program
    .command('run')
    .description('start a goal, run a worker in this process, and follow it until it ends')
    .argument('<objective>', 'what the goal should achieve ("-" reads it from stdin)');
  for (const option of [...goalOptionList(), ...headlessOptionList(), worktreeOption()])
    run.addOption(option);
  addTraceContentOption(run)
    .option('--output-last-message <file>', "write the goal's final summary to this file when it ends")
    .option(...NAME_OPTION)
    .option('--no-worker', 'do not host a worker here (another `goalrun worker` runs the goal)')
    .option(...TASK_QUEUE_OPTION)
    .addOption(outputFormatOption())
    .addOption(partialMessagesOption())
    .option('--json', 'the same as --output-format json: only the final status, as `status --json`')
    .action(
      action((context, objective: string, options) =>
        startCommands().runCommand(context, objective, options),
      ),
    );

  const start = program
    .command('start')
    .description('start a goal and return at once (a `goalrun worker` must run it)')
    .argument('<objective>', 'what the goal should achieve ("-" reads it from stdin)');
  for (const option of [...goalOptionList(), ...headlessOptionList(), worktreeOption()])
    start.addOption(option);
  start
    .option(...NAME_OPTION)
    .option(...TASK_QUEUE_OPTION)
    .option('--json', 'print {"sessionId","workflowId","runId","taskQueue"}')
    .action(
      action((context, objective: string, options) =>
        startCommands().startCommand(context, objective, options),
      ),
    );
}

/** `--worktree` of `run` and `start`. */
function worktreeOption(): Option {
  return new Option(
    '--worktree',
    "run the goal in a new git worktree under $GOALRUN_HOME/worktrees, on a branch goalrun/<name or short id>, so goals in one repository never touch each other's files; goalrun clean removes it unless it holds work found nowhere else (config worktree)",
  );
}

/** Adds `watch`, `cancel` and `resume`. */
export function registerLifecycleCommands(program: Command): void {
  program
    .command('watch')
    .description('follow a goal until it ends (exit code as for run)')
    .argument('[id]', ID_HELP)
    .option(...LAST_OPTION)
    .option(...TASK_QUEUE_OPTION)
    .addOption(outputFormatOption())
    .addOption(partialMessagesOption())
    .option('--from-start', 'with stream-json: replay the session from its first event, not only what is new')
    .option('--after <cursor>', "with stream-json: go on after this event (an event's cursor field)")
    .option('--json', 'the same as --output-format json')
    .action(
      action((context, id: string | undefined, options) =>
        inspectCommands().watchCommand(context, id, options),
      ),
    );

  program
    .command('cancel')
    .description('cancel a goal: running tools are stopped, a checkpoint and kept-progress summary saved')
    .argument('[id]', ID_HELP)
    .option(...LAST_OPTION)
    .option('--wait', 'wait until the goal has stopped and show its final status')
    .action(
      action((context, id: string | undefined, options) =>
        inspectCommands().cancelCommand(context, id, options),
      ),
    );

  const resume = program
    .command('resume')
    .description(
      'attach to a running goal, or continue a stopped one from its checkpoint (without an id: pick one of this project)',
    )
    .argument('[id]', `${ID_HELP}, or a session name of this project`)
    .option(...LAST_OPTION);
  for (const option of [...limitOptionList(), ...trustOptionList()]) resume.addOption(option);
  addTraceContentOption(resume)
    .option('--message <text>', 'a new instruction for the goal (needed to resume a completed goal)')
    .option('--force', 'resume a completed goal without a new instruction')
    .option('--no-worker', 'do not host a worker here')
    .option(...TASK_QUEUE_OPTION)
    .addOption(outputFormatOption())
    .addOption(partialMessagesOption())
    .option('--json', 'the same as --output-format json')
    .action(
      action((context, id: string | undefined, options) =>
        resumeCommand().resumeCommand(context, id, options),
      ),
    );
}
