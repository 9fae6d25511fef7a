/**
 * The commands that run and look after goalrun itself rather than one goal: the worker and its
 * deployment, the codec server, doctor, the daily budget, the embedded store, the dev server, the demo.
 */

import { type Command, Option } from 'commander';
import { SANDBOX_MODES } from '../core/sandbox-settings';
import { WORKER_LOG_LEVELS } from '../worker/logging';
import { WORKER_ROLES } from '../worker/roles';
import { action, TASK_QUEUE_OPTION } from './program-shared';
import { addTraceContentOption } from './tracing';

// Handlers load on use, so `goalrun --help` never loads the worker (issue 10).
const serviceCommands = (): typeof import('./commands/service-commands') =>
  require('./commands/service-commands');
const deployCommands = (): typeof import('./commands/deploy-commands') =>
  require('./commands/deploy-commands');
const codecServerCommands = (): typeof import('./commands/codec-server-command') =>
  require('./commands/codec-server-command');
const doctorCommand = (): typeof import('./commands/doctor-command') => require('./commands/doctor-command');
const budgetCommands = (): typeof import('./commands/budget-command') => require('./commands/budget-command');
const storeCommands = (): typeof import('./commands/store-commands') => require('./commands/store-commands');
const demoCommands = (): typeof import('./commands/demo-command') => require('./commands/demo-command');
const downCommands = (): typeof import('./commands/down-command') => require('./commands/down-command');

/** What `goalrun down --help` adds after the options. */
const DOWN_HELP = `
What it stops: only what goalrun itself started from GOALRUN_HOME (their pid files and records there):
  - the Temporal dev server started in the background when a command found none (not \`goalrun dev\`
    in a terminal, nor a server you run yourself)
  - the embedded PostgreSQL store (GOALRUN_HOME/store-pg), used when DATABASE_URL is not set
Both keep their data on disk; any goalrun command starts them again when it needs them.

Open goals (running, waiting or paused) would halt mid-step, so down refuses and names them; cancel
them or let them end first, or pass --force (their state is kept: they go on once the servers and a
worker run again, or with goalrun resume). With nothing running it says so and exits 0.

Examples:
  goalrun down            # after goalrun demo: stop the dev server and the store
  goalrun down --force    # stop them even though goals are open
`;
const serveCommands = (): typeof import('./commands/serve-command') => require('./commands/serve-command');

/** Adds `worker`, `deploy`, `codec-server` and `doctor`. */
export function registerServiceCommands(program: Command): void {
  addTraceContentOption(program.command('worker'))
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
    .option(
      '--max-memory <size>',
      'the memory this worker may use, e.g. 2G or 1536M (also GOALRUN_WORKER_MAX_MEMORY); it sizes the cache of goals kept in memory (default: the cgroup limit, or half the machine)',
    )
    .addHelpText(
      'after',
      `
A goal that falls out of the worker's cache is replayed from its first event at its next step, so the
cache holds as many goals as the memory allows (about 1 MiB each); the start-up line and goalrun
doctor say how many fit. Run more workers, on this machine or others, when more goals are live.`,
    )
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
    .command('serve')
    .description(
      'one page for every goal of the store, grouped by what needs you, with approve, deny, steer, pause, raise and cancel; live',
    )
    .option('--port <port>', 'port to listen on (default 8399; 0 picks a free one)')
    .option('--host <host>', 'address to listen on (default 127.0.0.1; anything else is reachable by others)')
    .addHelpText(
      'after',
      `
It prints a URL with an access token (kept in $GOALRUN_HOME/serve-token, so links survive a restart).
Every request needs it; actions are POSTs with "Authorization: Bearer <token>".
API: GET /api/goals, GET /api/goals/:id, POST /api/goals/:id/approve|deny|steer|pause|unpause|limits|cancel

Example (from a phone, through your own tunnel; see docs/deploying.md):
  goalrun serve --port 8399`,
    )
    .action(action((context, options) => serveCommands().serveCommand(context, options)));

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
    .option(
      '--trust-project',
      "also check the workspace's .goalrun/hooks.json and .mcp.json, as a trusted goal uses them",
    )
    .addOption(new Option('--trust-project-mcp', 'the old name of --trust-project').hideHelp())
    .option('--network', 'start stdio MCP servers with the network, as goals with --network do')
    .option('--json', 'print the checks as JSON')
    .action(action(async (context, options) => doctorCommand().doctorCommand(context, options)));
}

/** Adds `budget` (with `budget set`) and `store` (with `store status` and `store stop`). */
export function registerStoreCommands(program: Command): void {
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
    .action(action(async (context, options) => storeCommands().storeStatusCommand(context, options)));
  store
    .command('stop')
    .description('stop it (running workers lose their connection; any goalrun command starts it again)')
    .action(action(async (context) => storeCommands().storeStopCommand(context)));
}

/** Adds `dev`, `demo` and `down`: goalrun on this machine alone, without Postgres or a Temporal cluster. */
export function registerLocalCommands(program: Command): void {
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

  program
    .command('down')
    .description(
      'stop the background Temporal dev server and the embedded store that goalrun started (refused while goals are open)',
    )
    .option('--force', 'stop them even while goals are open (their state is kept; they go on later)')
    .option('--json', 'print what was stopped as JSON')
    .addHelpText('after', DOWN_HELP)
    .action(action((context, options) => downCommands().downCommand(context, options)));
}
