/**
 * `goalrun demo`: a scripted goal on the embedded defaults. No API key (the model is a script), no
 * PostgreSQL (the embedded one under the data directory), no running Temporal (a dev server is started).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { CliContext } from '../context';
import { say } from '../output';
import { runCommand } from './goal-commands';

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
              summary: 'greet.js prints "Hello, <name>"; checked by running it (output in greeting.txt).',
            },
          },
        ],
        usage: usage(1400, 40),
      },
    ],
  };
}

/** Runs the demo goal in a fresh workspace under the data directory. */
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
  if (!options.json) {
    say('goalrun demo: a scripted model works on a small goal, durably, on Temporal.');
    say(`  store: ${context.describeStore()}`);
  }
  return runCommand(context, DEMO_OBJECTIVE, { workspace, model: `scripted:${script}`, json: options.json });
}
