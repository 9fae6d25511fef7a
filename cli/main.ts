#!/usr/bin/env node
/**
 * The `goalrun` command: builds the program from the command groups (the *-program.ts files) and
 * runs it. Each command's module loads only when the command runs, so `--help` and `--version` stay
 * fast (issue 10; test/e2e/cli-module-graph.test.ts keeps it so).
 */
import { Command, CommanderError } from 'commander';
import { DEFAULT_MODEL } from '../core/limits';
import { versionText } from '../worker/build-info';
import { ExitCode } from './exit-codes';
import { registerLifecycleCommands, registerStartCommands } from './goal-program';
import { registerInspectionCommands } from './inspection-program';
import { registerLocalCommands, registerServiceCommands, registerStoreCommands } from './operations-program';
import { isHostingWorker, notice } from './output';
import { reportError } from './program-shared';
import { registerScheduleCommands } from './schedule-program';
import { registerSessionCommands } from './session-program';
import { registerSteeringCommands } from './steering-program';

/** What `goalrun --help` prints after the commands. */
const ENVIRONMENT_HELP = `
Environment:
  TEMPORAL_ADDRESS     Temporal frontend (default localhost:7233; a local dev server is started if none answers)
  TEMPORAL_NAMESPACE   Temporal namespace (default "default")
  TEMPORAL_API_KEY, TEMPORAL_TLS, TEMPORAL_TLS_CLIENT_CERT_PATH, TEMPORAL_TLS_CLIENT_KEY_PATH,
  TEMPORAL_TLS_SERVER_CA_CERT_PATH, TEMPORAL_TLS_SERVER_NAME, TEMPORAL_PROFILE
                       a secured cluster or Temporal Cloud, as every Temporal tool reads them; they win over
                       the profile of ~/.config/temporalio/temporal.toml (docs/deploying.md)
  GOALRUN_TASK_QUEUE   task queue of goalrun workers (default: goalrun-<store id>, derived from the store)
  DATABASE_URL         PostgreSQL session store; without it an embedded PostgreSQL under GOALRUN_HOME/store-pg, shared by all goalrun processes
  GOALRUN_MODEL        default model (else config "model", else ${DEFAULT_MODEL})
  GOALRUN_HOME         data directory (default ~/.goalrun); holds config.json, the embedded store, logs
  OPENAI_API_KEY, OPENAI_BASE_URL, ANTHROPIC_API_KEY   provider settings, read by the process running the worker
  OPENAI_COMPATIBLE_API_KEY   the key an openai-compatible endpoint gets (--api-key-env names another); OPENAI_API_KEY goes to api.openai.com only
  GOALRUN_PAYLOAD_KEYS encrypt Temporal payloads: id1:base64key,id2:base64key (first seals, all open; docs/security.md)

Exit codes of run, watch and resume:
  0 completed · 1 failed or blocked · 2 usage or configuration error · 3 cancelled · 4 limit reached

Every key of GOALRUN_HOME/config.json, variable and flag: docs/configuration.md

Examples:
  goalrun demo
  goalrun run "make the tests in ./api pass" --workspace ./api --model openai:gpt-4o
  goalrun start "upgrade lodash and fix what breaks" --json   # then: goalrun watch <session>
  goalrun status --last                                         # the newest goal of this directory
  goalrun schedule add nightly --cron "0 3 * * *" "update the dependencies"   # a goal every night
`;

/** The whole program: every command, in the order `goalrun --help` lists them. */
function buildProgram(): Command {
  const program = new Command('goalrun')
    .description('Durable, unattended LLM goal runs on Temporal, with a Postgres session store.')
    .version(versionText(), '-V, --version', 'print the version and the workflow bundle hashes')
    .option(
      '--profile <name>',
      'the temporal.toml profile to connect to Temporal with (else TEMPORAL_PROFILE, else "default")',
    )
    .showHelpAfterError('(run with --help for usage)')
    .addHelpText('after', ENVIRONMENT_HELP)
    .exitOverride();

  // Commander lists commands in the order they are added: these calls keep the help's order.
  registerStartCommands(program); // run, start
  registerInspectionCommands(program); // status, tasks, compact, policy, stats, list, upgrade-check
  registerSessionCommands(program); // fork, sessions, clean, search
  registerLifecycleCommands(program); // watch, cancel, resume
  registerScheduleCommands(program); // schedule add|list|show|pause|unpause|trigger|delete
  registerSteeringCommands(program); // steer, pause, unpause, clear, limits, model, rename, jobs, …
  registerServiceCommands(program); // worker, deploy, codec-server, doctor
  registerStoreCommands(program); // budget, store
  registerLocalCommands(program); // dev, demo, down
  return program;
}

/** The exit code of a command whose reader went away (`goalrun list | head -3`): nothing went wrong. */
const READER_GONE_EXIT = 0;

/**
 * A reader that goes away (`goalrun store status | head -3`) ends the command quietly, as `git log |
 * head` does: one place for every command, so none crashes on EPIPE or prints a stack. A process that
 * hosts a worker (`run`) goes on without its output instead, and says so once, since exiting would
 * stop the goal it runs; so does any command on another write error (a full disk behind a redirect).
 * A failing stderr has nowhere to be reported.
 */
function handleFailingOutput(): void {
  let said = false;
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE' && !isHostingWorker()) process.exit(READER_GONE_EXIT);
    if (said) return;
    said = true;
    notice(`the output cannot be written (${err.message}); what follows is not printed`);
  });
  process.stderr.on('error', () => {});
}

async function main(): Promise<void> {
  handleFailingOutput();
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
