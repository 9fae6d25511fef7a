#!/usr/bin/env node
/** The `goalrun` command. */
import { Command, CommanderError, Option } from 'commander';
import { ConfigError } from '../core/errors';
import { DEFAULT_MODEL } from '../core/limits';
import { SANDBOX_MODES } from '../core/sandbox-settings';
import { versionText } from '../worker/build-info';
import { WORKER_LOG_LEVELS } from '../worker/logging';
import { WORKER_ROLES } from '../worker/roles';
import type { CliContext } from './context';
import { ExitCode } from './exit-codes';
import { goalOptionList, headlessOptionList, limitOptionList } from './goal-options';
import { notice } from './output';
import { outputFormatOption } from './output-format';
import { addSteeringCommands, idAndWords } from './steering-program';

const ENVIRONMENT_HELP = `
Environment:
  TEMPORAL_ADDRESS     Temporal frontend (default localhost:7233; a local dev server is started if none answers)
  TEMPORAL_NAMESPACE   Temporal namespace (default "default")
  GOALRUN_TASK_QUEUE   task queue of goalrun workers (default: goalrun-<store id>, derived from the store)
  DATABASE_URL         PostgreSQL session store; without it an embedded PostgreSQL under GOALRUN_HOME/store-pg, shared by all goalrun processes
  GOALRUN_MODEL        default model (else config "model", else ${DEFAULT_MODEL})
  GOALRUN_HOME         data directory (default ~/.goalrun); holds config.json, the embedded store, logs
  OPENAI_API_KEY, OPENAI_BASE_URL, ANTHROPIC_API_KEY   provider settings, read by the process running the worker
  GOALRUN_PAYLOAD_KEYS encrypt Temporal payloads: id1:base64key,id2:base64key (first seals, all open; docs/security.md)

Exit codes of run, watch and resume:
  0 completed · 1 failed or blocked · 2 usage or configuration error · 3 cancelled · 4 limit reached

Every key of GOALRUN_HOME/config.json, variable and flag: docs/configuration.md

Examples:
  goalrun demo
  goalrun run "make the tests in ./api pass" --workspace ./api --model openai:gpt-4o
  goalrun start "upgrade lodash and fix what breaks" --json   # then: goalrun watch <session>
  goalrun status --last                                         # the newest goal of this directory
`;

/** The option every command that names a goal takes instead of an id. */
const LAST_OPTION = ['--last', 'the newest goal of the current directory (instead of an id)'] as const;
/** How commands describe their id argument. */
const ID_HELP = 'session id, a unique prefix of it, workflow id, session name, or the short id `list` prints';
/** `--name` of run and start: get or create the project's session of that name. */
const NAME_OPTION = [
  '--name <name>',
  "the project's session of this name: started if new, continued with the objective as an instruction if stopped (refused while it runs)",
] as const;
/** The option that overrides the task queue derived from the store. */
const TASK_QUEUE_OPTION = [
  '--task-queue <name>',
  'task queue of the workers (default: goalrun-<store id>, or GOALRUN_TASK_QUEUE / config task_queue)',
] as const;

// Each command's module loads when the command runs, so `--help` and the light commands (status,
// list, tasks, policy, stats) never load the worker, the providers or the AI SDK (issue 10;
// test/e2e/cli-module-graph.test.ts keeps it so).
const contextModule = (): typeof import('./context') => require('./context');
const startCommands = (): typeof import('./commands/start-commands') => require('./commands/start-commands');
const resumeCommand = (): typeof import('./commands/resume-command') => require('./commands/resume-command');
const inspectCommands = (): typeof import('./commands/inspect-commands') =>
  require('./commands/inspect-commands');
const statusCommands = (): typeof import('./commands/status-commands') =>
  require('./commands/status-commands');
const contextCommands = (): typeof import('./commands/context-commands') =>
  require('./commands/context-commands');
const tasksCommands = (): typeof import('./commands/tasks-command') => require('./commands/tasks-command');
const serviceCommands = (): typeof import('./commands/service-commands') =>
  require('./commands/service-commands');
const deployCommands = (): typeof import('./commands/deploy-commands') =>
  require('./commands/deploy-commands');
const demoCommands = (): typeof import('./commands/demo-command') => require('./commands/demo-command');
const upgradeCheckCommands = (): typeof import('./commands/upgrade-check-command') =>
  require('./commands/upgrade-check-command');
const codecServerCommands = (): typeof import('./commands/codec-server-command') =>
  require('./commands/codec-server-command');

/** Wraps a command action: settings and resources per invocation, errors as one clear line. */
function action<A extends unknown[]>(handler: (context: CliContext, ...args: A) => Promise<number>) {
  return async (...args: A) => {
    let context: CliContext | undefined;
    let code: number;
    try {
      // Commander passes the options object just before the command itself.
      const options = args.at(-2) as { taskQueue?: string; workspace?: string } | undefined;
      const workspace = options && typeof options === 'object' ? options.workspace : undefined;
      context = new (contextModule().CliContext)(contextModule().settingsFor(workspace));
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
function reportError(err: unknown): number {
  if (err instanceof ConfigError) {
    notice(err.message);
    return ExitCode.usage;
  }
  const message = (err as Error)?.message ?? String(err);
  notice(`error: ${message}`);
  if (process.env.GOALRUN_DEBUG) console.error(err);
  return ExitCode.failedOrBlocked;
}

function buildProgram(): Command {
  const program = new Command('goalrun')
    .description('Durable, unattended LLM goal runs on Temporal, with a Postgres session store.')
    .version(versionText(), '-V, --version', 'print the version and the workflow bundle hashes')
    .showHelpAfterError('(run with --help for usage)')
    .addHelpText('after', ENVIRONMENT_HELP)
    .exitOverride();

  const run = program
    .command('run')
    .description('start a goal, run a worker in this process, and follow it until it ends')
    .argument('<objective>', 'what the goal should achieve ("-" reads it from stdin)');
  for (const option of [...goalOptionList(), ...headlessOptionList()]) run.addOption(option);
  run
    .option('--output-last-message <file>', "write the goal's final summary to this file when it ends")
    .option(...NAME_OPTION)
    .option('--no-worker', 'do not host a worker here (another `goalrun worker` runs the goal)')
    .option(...TASK_QUEUE_OPTION)
    .addOption(outputFormatOption())
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
  for (const option of [...goalOptionList(), ...headlessOptionList()]) start.addOption(option);
  start
    .option(...NAME_OPTION)
    .option(...TASK_QUEUE_OPTION)
    .option('--json', 'print {"sessionId","workflowId","runId","taskQueue"}')
    .action(
      action((context, objective: string, options) =>
        startCommands().startCommand(context, objective, options),
      ),
    );

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
    .action(
      action(async (context, id, options) =>
        (require('./commands/fork-command') as typeof import('./commands/fork-command')).forkCommand(
          context,
          id,
          options,
        ),
      ),
    );

  program
    .command('sessions')
    .description("list this project's sessions: name, id, status, steps, cost, last activity, objective")
    .option('--all', "every project's sessions")
    .option('--json', 'print as JSON')
    .action(
      action(async (context, options) =>
        (
          require('./commands/sessions-command') as typeof import('./commands/sessions-command')
        ).sessionsCommand(context, options),
      ),
    );

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
    .action(
      action(async (context, options) =>
        (require('./commands/clean-command') as typeof import('./commands/clean-command')).cleanCommand(
          context,
          options,
        ),
      ),
    );

  program
    .command('search')
    .description("search this project's sessions (messages, summaries, tool results) by words")
    .argument('<text>', 'words to look for; "a phrase", -word and or work as in a web search')
    .option('--all', "search every project's sessions")
    .option('--limit <n>', 'matches to show at most', '20')
    .option('--json', 'print the matches as JSON')
    .action(
      action(async (context, text: string, options) =>
        (require('./commands/search-command') as typeof import('./commands/search-command')).searchCommand(
          context,
          text,
          options,
        ),
      ),
    );

  program
    .command('watch')
    .description('follow a goal until it ends (exit code as for run)')
    .argument('[id]', ID_HELP)
    .option(...LAST_OPTION)
    .option(...TASK_QUEUE_OPTION)
    .addOption(outputFormatOption())
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
  for (const option of limitOptionList()) resume.addOption(option);
  resume
    .option('--message <text>', 'a new instruction for the goal (needed to resume a completed goal)')
    .option('--force', 'resume a completed goal without a new instruction')
    .option('--no-worker', 'do not host a worker here')
    .option(...TASK_QUEUE_OPTION)
    .addOption(outputFormatOption())
    .option('--json', 'the same as --output-format json')
    .action(
      action((context, id: string | undefined, options) =>
        resumeCommand().resumeCommand(context, id, options),
      ),
    );

  addSteeringCommands(program, { action, idHelp: ID_HELP, lastOption: LAST_OPTION });

  program
    .command('worker')
    .description('run goals and their tools (graceful shutdown on Ctrl-C / SIGTERM)')
    .addOption(
      new Option('--log-level <level>', 'info: one line per event; debug: every field')
        .choices([...WORKER_LOG_LEVELS])
        .default('info'),
    )
    .addOption(
      new Option(
        '--role <role>',
        'all: goals, model calls and tools; model: goals and model calls (holds the provider keys); tools: the tools of this host (no provider key needed)',
      )
        .choices([...WORKER_ROLES])
        .default('all'),
    )
    .option(
      '--workspace-root <dir>',
      'with --role tools: the directory whose workspaces this host serves; tool calls of goals outside it are refused (default: the current one)',
    )
    .addOption(
      new Option(
        '--sandbox <mode>',
        'the sandbox mode of the goals whose tools run here (default: config sandbox.mode); with off, bubblewrap is not required',
      ).choices([...SANDBOX_MODES]),
    )
    .option(...TASK_QUEUE_OPTION)
    .option(
      '--metrics-port <[host:]port>',
      "serve Prometheus metrics (goalrun's counters and the Temporal SDK's) on http://host:port/metrics (host default 127.0.0.1)",
    )
    .option(
      '--versioning',
      "register as a build of the 'goalrun' Worker Deployment (also GOALRUN_WORKER_VERSIONING=1): goals stay on the build that started them and move to the current one when they continue as new",
    )
    .option('--set-current', 'with --versioning: make this build current once it has registered')
    .action(action((context, options) => serviceCommands().workerCommand(context, options)));

  const deploy = program
    .command('deploy')
    .description("the 'goalrun' Worker Deployment of versioned workers (goalrun worker --versioning)");
  deploy
    .command('set-current')
    .description(
      'make a build current: new goals start on it, running goals move to it at their next continue-as-new',
    )
    .option(
      '--build-id <id>',
      "the build (default: this installation's, what its goalrun worker --versioning registers)",
    )
    .action(action((context, options) => deployCommands().setCurrentCommand(context, options)));
  deploy
    .command('show')
    .description("the deployment's builds and which one is current")
    .option('--json', 'print as JSON')
    .action(action((context, options) => deployCommands().showCommand(context, options)));

  program
    .command('codec-server')
    .description(
      "serve Temporal's codec endpoints (POST /encode, /decode) with the payload keys, so the Web UI shows encrypted payloads decrypted",
    )
    .option('--port <port>', 'port to listen on (default 8888)')
    .option('--host <host>', 'address to listen on (default 127.0.0.1)')
    .option(
      '--cors-origin <origin...>',
      'Web UI origins allowed to call it (default http://localhost:8233, http://127.0.0.1:8233, http://localhost:8080; * for any)',
    )
    .option('--token <token>', 'require "Authorization: Bearer <token>" (or set GOALRUN_CODEC_TOKEN)')
    .addHelpText(
      'after',
      `
Needs the payload keys (GOALRUN_PAYLOAD_KEYS or the config's payload_keys_file); see docs/security.md.

Example:
  GOALRUN_PAYLOAD_KEYS=k1:$(openssl rand -base64 32) goalrun codec-server --port 8888
  temporal server start-dev --ui-codec-endpoint http://127.0.0.1:8888`,
    )
    .action(action((context, options) => codecServerCommands().codecServerCommand(context, options)));

  program
    .command('doctor')
    .description(
      'check what goals need here: bubblewrap (and that it can sandbox), ripgrep, temporal, the database, provider keys, ' +
        'the project instructions, hooks and MCP servers (each started, its tools listed)',
    )
    .addOption(
      new Option(
        '--sandbox <mode>',
        'the sandbox mode goals will use (with off, bubblewrap is optional)',
      ).choices([...SANDBOX_MODES]),
    )
    .option(
      '-w, --workspace <dir>',
      'the workspace whose AGENTS.md and project MCP servers to check (default: the current directory)',
    )
    .option('--mcp-config <file>', 'also start the MCP servers of this file and list their tools')
    .option('--trust-project-mcp', "also check the workspace's .mcp.json and .goalrun/hooks.json")
    .option('--network', 'start stdio MCP servers with the network, as goals with --network do')
    .option('--json', 'print the checks as JSON')
    .action(
      action(async (context, options) =>
        (require('./commands/doctor-command') as typeof import('./commands/doctor-command')).doctorCommand(
          context,
          options,
        ),
      ),
    );

  const budgetCommands = () =>
    require('./commands/budget-command') as typeof import('./commands/budget-command');
  const budget = program
    .command('budget')
    .description("the store-wide daily money budget: today's cap, spent, reserved, spend per goal and model")
    .option('--json', 'print as JSON')
    .action(action((context, options) => budgetCommands().budgetShowCommand(context, options)));
  budget
    .command('set')
    .description('set the daily budget every goal of the store draws on (UTC day), or turn it off')
    .option('--daily-usd <usd>', 'dollars per UTC day, or "off"')
    .option('--json', 'print as JSON')
    .action(action((context, options) => budgetCommands().budgetSetCommand(context, options)));

  const store = program
    .command('store')
    .description('the embedded PostgreSQL store goalrun runs when DATABASE_URL is not set');
  store
    .command('status')
    .description('where it is, whether it runs, and how to connect to it')
    .option('--json', 'print as JSON')
    .action(
      action(async (context, options) =>
        (
          require('./commands/store-commands') as typeof import('./commands/store-commands')
        ).storeStatusCommand(context, options),
      ),
    );
  store
    .command('stop')
    .description('stop it (running workers lose their connection; any goalrun command starts it again)')
    .action(
      action(async (context) =>
        (require('./commands/store-commands') as typeof import('./commands/store-commands')).storeStopCommand(
          context,
        ),
      ),
    );

  program
    .command('dev')
    .description('run a local Temporal dev server in the foreground (Web UI on :8233, state in GOALRUN_HOME)')
    .action(action((context) => serviceCommands().devCommand(context)));

  program
    .command('demo')
    .description('run a scripted goal on the embedded defaults: no API key, no Postgres, no Temporal needed')
    .option('-w, --workspace <dir>', 'where the demo works (default: a new folder under GOALRUN_HOME/demo)')
    .option(...TASK_QUEUE_OPTION)
    .option('--json', 'print only the final status as JSON')
    .action(action((context, options) => demoCommands().demoCommand(context, options)));

  return program;
}

async function main(): Promise<void> {
  const program = buildProgram();
  try {
    await program.parseAsync(process.argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      const helpOrVersion = ['commander.helpDisplayed', 'commander.version', 'commander.help'].includes(
        err.code,
      );
      process.exit(helpOrVersion ? 0 : ExitCode.usage);
    }
    process.exit(reportError(err));
  }
}

void main();
