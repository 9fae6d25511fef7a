/**
 * Issue 7, acceptance 5: `run` and `watch` are never silent. Off a terminal, a retry prints a line
 * at once (and again every 30 s); on a terminal, a live line shows the step, the call in progress and
 * its elapsed time, rewritten in place. A provider that cannot be reached for
 * `provider_unreachable_minutes` fails the goal with a clear reason.
 *
 * The last test needs the lead's model-step change (ProviderUnreachable after that many minutes);
 * the CLI side (the config key reaching the goal definition) is here.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI, killAndWait, runCli, scriptedModel, spawnCli, waitFor } from '../support/cli';
import { goalTestEnv } from '../support/goal-env';
import { findFreePort } from '../support/temporal-server';

/** Acceptance: the first retry line appears this soon. */
const RETRY_LINE_WITHIN_MS = 10_000;

const hasScript = spawnSync('script', ['--version'], { stdio: 'ignore' }).status === 0;

describe('live progress', () => {
  it('prints a retry line within 10 s when the model server cannot be reached', async () => {
    const t = goalTestEnv('retryline');
    const closedPort = await findFreePort();
    const run = spawnCli(
      [
        'run',
        'talk to nobody',
        '--workspace',
        t.workspace,
        '--model',
        'openai-compatible:nobody',
        '--base-url',
        `http://127.0.0.1:${closedPort}/v1`,
      ],
      t.env,
    );
    try {
      await waitFor('the goal to start', () => /^goal \S+/m.test(run.output()), 30_000, 100);
      await waitFor(
        'a retry line',
        () =>
          /step 1 · model step 1 · openai-compatible:nobody · .* · retry attempt \d+, last error: .+/.test(
            run.output(),
          ),
        RETRY_LINE_WITHIN_MS,
        100,
      );
      // Off a terminal nothing is rewritten in place.
      expect(run.output()).not.toContain('\r');
    } finally {
      await killAndWait(run, 'SIGTERM');
    }
  });

  it.skipIf(!hasScript)(
    'shows a live line on a terminal: step, the call in progress, elapsed time',
    async () => {
      const t = goalTestEnv('liveline');
      const model = scriptedModel(t.home, [
        { toolCalls: [{ name: 'bash', args: { command: 'sleep 3; echo slept' } }] },
        { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'slept' } }] },
      ]);
      const log = path.join(t.home, 'terminal.log');
      // `script` gives the CLI a pseudo-terminal and records what it writes.
      const command = [
        process.execPath,
        CLI,
        'run',
        'sleep a while',
        '--workspace',
        t.workspace,
        '--model',
        model,
      ]
        .map((word) => `'${word.replace(/'/g, "'\\''")}'`)
        .join(' ');
      const result = spawnSync('script', ['-qefc', command, log], {
        env: t.env,
        encoding: 'utf8',
        timeout: 120_000,
      });
      expect(result.status, result.stderr).toBe(0);
      const screen = fs.readFileSync(log, 'utf8');
      // Each update returns the cursor and clears the line before rewriting it.
      const rewrite = `\r${String.fromCharCode(27)}[2K`;
      expect(screen).toContain(`${rewrite}  step 1 · bash: sleep 3; echo slept · `);
      expect(
        screen.split(rewrite).filter((part) => /^ {2}step 1 · bash: .* · \d+\.\d s/.test(part)).length,
      ).toBeGreaterThan(1);
      expect(screen).toMatch(/goal completed — 2 steps, 1 iteration/);
    },
  );

  it('fails the goal after provider_unreachable_minutes of a provider that cannot be reached', {
    timeout: 240_000,
  }, async () => {
    const t = goalTestEnv('unreachable');
    fs.writeFileSync(path.join(t.home, 'config.json'), JSON.stringify({ provider_unreachable_minutes: 1 }));
    const closedPort = await findFreePort();
    const result = await runCli(
      [
        'run',
        'talk to nobody for a minute',
        '--workspace',
        t.workspace,
        '--model',
        'openai-compatible:nobody',
        '--base-url',
        `http://127.0.0.1:${closedPort}/v1`,
        '--json',
      ],
      t.env,
      220_000,
    );
    expect(result.code, result.stderr).toBe(1);
    const status = JSON.parse(result.stdout);
    expect(status.status).toBe('failed');
    expect(status.reason).toMatch(/unreachable|cannot be reached|connect/i);
  });
});
