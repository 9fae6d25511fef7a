/**
 * `goalrun demo`: a scripted goal on the embedded defaults. No API key (the model is a script), no
 * PostgreSQL (the embedded one under the data directory), no running Temporal (a dev server is started).
 */
import fs from 'node:fs';
import path from 'node:path';
import { DEFAULT_SANDBOX } from '../../core/sandbox-settings';
import { projectHash } from '../../store/session-id';
import type { CliContext } from '../context';
import { ExitCode } from '../exit-codes';
import { say } from '../output';
import { sandboxProblem } from '../sandbox-check';
import { runCommand } from './start-commands';

const DEMO_OBJECTIVE =
  'Create greet.js, a Node script that greets the name given on the command line; check its output; then capitalise the greeting and check again.';

/** The demo's model turns: write, run, read back, edit, re-run, finish. */
function demoTurns() {
  const usage = (input: number, output: number) => ({ input, output });
  return {
    turns: [
      {
        text: 'I will write the script first.',
        toolCalls: [
          {
            name: 'file-write',
            args: {
              path: 'greet.js',
              // biome-ignore lint/suspicious/noTemplateCurlyInString: this is the JavaScript the demo writes
              content: "const name = process.argv[2] ?? 'world';\nconsole.log(`hello, ${name}`);\n",
            },
          },
        ],
        usage: usage(900, 60),
      },
      {
        toolCalls: [
          { name: 'bash', args: { command: 'node greet.js goalrun > greeting.txt && echo exit=$?' } },
        ],
        usage: usage(1000, 30),
      },
      { toolCalls: [{ name: 'file-read', args: { path: 'greeting.txt' } }], usage: usage(1100, 20) },
      {
        text: 'The output is right; now capitalise the greeting.',
        toolCalls: [
          { name: 'file-edit', args: { path: 'greet.js', old_string: '`hello, ', new_string: '`Hello, ' } },
        ],
        usage: usage(1200, 40),
      },
      {
        toolCalls: [{ name: 'bash', args: { command: 'node greet.js goalrun | tee greeting.txt' } }],
        usage: usage(1300, 25),
      },
      {
        toolCalls: [
          {
            name: 'finish',
            args: {
              status: 'complete',
              // No claim here: the demo says what was checked after the goal, from what really happened.
              summary: 'greet.js written, run, capitalised and run again (output in greeting.txt).',
            },
          },
        ],
        usage: usage(1400, 40),
      },
    ],
  };
}

/** What the demo's goal printed into greeting.txt when every step worked. */
const EXPECTED_GREETING = 'Hello, goalrun\n';

/** The tool calls of a session whose result was a failure, as `step N · tool`. */
async function failedToolCalls(
  context: CliContext,
  workspace: string,
): Promise<{ failed: string[]; total: number }> {
  const store = await context.sessionStore();
  // The demo's workspace is new: its project has one session, the demo's.
  const session = await store.latestSessionOfProject(projectHash(workspace));
  if (!session) return { failed: ['the goal left no session'], total: 0 };
  const failed: string[] = [];
  let total = 0;
  let step = 0;
  for (const entry of await store.listMessages(session.id)) {
    if (entry.message.role === 'assistant') step += 1;
    if (entry.message.role !== 'tool') continue;
    for (const part of entry.message.content) {
      total += 1;
      const ok = entry.meta?.tool?.ok ?? part.output.type === 'text';
      if (!ok) failed.push(`step ${step} · ${part.toolName}`);
    }
  }
  return { failed, total };
}

function readOr(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * Runs the demo goal in a fresh workspace under the data directory. Without a usable bubblewrap it
 * runs unsandboxed (the workspace is its own throwaway directory and the model a script) and says so;
 * its verdict comes from the tool results and the file the goal made, never from the script.
 */
export async function demoCommand(
  context: CliContext,
  options: { workspace?: string; json?: boolean },
): Promise<number> {
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const workspace = path.resolve(options.workspace ?? path.join(context.settings.home, 'demo', stamp));
  fs.mkdirSync(workspace, { recursive: true });
  const script = path.join(context.settings.home, 'demo', `model-${stamp}.json`);
  fs.mkdirSync(path.dirname(script), { recursive: true });
  fs.writeFileSync(script, `${JSON.stringify(demoTurns(), null, 2)}\n`);
  const configuredMode = context.settings.config.sandbox?.mode ?? DEFAULT_SANDBOX.mode;
  const noSandbox = configuredMode === 'off' ? undefined : await sandboxProblem();
  if (!options.json) {
    say('goalrun demo: a scripted model works on a small goal, durably, on Temporal.');
    say(`  store: ${context.describeStore()}`);
    if (noSandbox) {
      say(`  ${noSandbox}`);
      say(`  notice: the demo runs its scripted goal UNSANDBOXED in its throwaway workspace ${workspace}`);
    }
  }
  const code = await runCommand(context, DEMO_OBJECTIVE, {
    workspace,
    model: `scripted:${script}`,
    json: options.json,
    ...(noSandbox ? { sandbox: 'off' } : {}),
  });
  const { failed, total } = await failedToolCalls(context, workspace);
  const greeting = readOr(path.join(workspace, 'greeting.txt'));
  const worked = code === 0 && failed.length === 0 && greeting === EXPECTED_GREETING;
  if (!options.json) {
    if (worked) {
      say(
        `demo checked: all ${total} tool calls succeeded, and running greet.js printed "${EXPECTED_GREETING.trim()}" (greeting.txt)`,
      );
    } else {
      const what =
        failed.length > 0
          ? `${failed.length} of ${total} tool calls failed (${failed.join(', ')})`
          : 'the goal did not finish its work';
      say(
        `demo FAILED: ${what}; greeting.txt ${greeting === undefined ? 'was not written' : `says ${JSON.stringify(greeting)}`}`,
      );
    }
    if (noSandbox)
      say('  to sandbox goals here: apt-get install bubblewrap (until then, goals need --sandbox off)');
    // The demo leaves servers running in the background: say how to stop them.
    say(
      'when you are done: goalrun down   (stops the Temporal dev server and the embedded store goalrun started)',
    );
  }
  return code !== ExitCode.completed ? code : worked ? ExitCode.completed : ExitCode.failedOrBlocked;
}
