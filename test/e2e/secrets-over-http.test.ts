/**
 * Issue 8, secret hygiene over real HTTP: with the sandbox off (asked for by name), a tool's output
 * does show the worker's secrets, so redaction is all that stands between them and the provider. A
 * model runs `env`, reads the worker's /proc environ and `cat`s goalrun's config file (which holds a
 * database URL of its own); no planted value reaches any request the OpenAI-compatible server
 * receives (only the key in its Authorization header), the store (as pg_dump writes it), the
 * Temporal history or the worker's log, and the outputs the model sees say [REDACTED] instead.
 * `status` says that the goal ran without a sandbox.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { REDACTED } from '../../activities/sandbox/redact';
import { runCli } from '../support/cli';
import { goalTestEnv, withPassword } from '../support/goal-env';
import { goalArgs } from '../support/goal-steps';
import { allText, fetchHistory } from '../support/history';
import {
  type OpenAITestServer,
  requestStep,
  startOpenAITestServer,
  type TestTurn,
} from '../support/openai-test-server';
import { pgDump } from '../support/pg-dump';

const PLANTED = {
  OPENAI_API_KEY: 'sk-planted-http-key-7d6c5b4a3f2e',
  OPENAI_COMPATIBLE_API_KEY: 'sk-planted-endpoint-key-91ab27cd',
  ANTHROPIC_API_KEY: 'sk-ant-planted-http-1a2b3c4d5e6f',
  DEPLOY_TOKEN: 'planted-http-deploy-token-99887766',
  DB_PASSWORD: 'planted-http-db-pass-24681357',
  /** The password of the config file's database_url (DATABASE_URL overrides it, a tool can still read it). */
  CONFIG_DB_PASSWORD: 'planted-http-config-pass-11223344',
};

const bash = (command: string): TestTurn => ({ toolCalls: [{ name: 'bash', args: { command } }] });
/** The model's turns; the config file's path is known once the test has its data directory. */
const turnsFor = (configPath: string): TestTurn[] => [
  bash('env'),
  // The worker's environment: the tool's parent is the spawn server (an empty environment) or, with
  // it off, the worker itself; read both the parent's and the grandparent's.
  bash(
    "for p in $PPID $(awk '{print $4}' /proc/$PPID/stat); do tr '\\0' '\\n' < /proc/$p/environ; done; echo \"db is $DATABASE_URL\"",
  ),
  bash(`cat ${configPath}`),
  { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'looked around' } }] },
];
let TURNS: TestTurn[] = [];

describe('secrets and a model over HTTP', () => {
  const databaseUrl = inject('databaseUrl');
  let server: OpenAITestServer;

  beforeAll(async () => {
    server = await startOpenAITestServer({
      fallback: (body) => TURNS[requestStep(body) - 1] ?? TURNS[TURNS.length - 1],
    });
  });
  afterAll(async () => server?.close());

  it('redacts every planted value from what the provider, the store, the history and the log get', async () => {
    const t = goalTestEnv('secrets-http', {
      OPENAI_API_KEY: PLANTED.OPENAI_API_KEY,
      OPENAI_COMPATIBLE_API_KEY: PLANTED.OPENAI_COMPATIBLE_API_KEY,
      ANTHROPIC_API_KEY: PLANTED.ANTHROPIC_API_KEY,
      DEPLOY_TOKEN: PLANTED.DEPLOY_TOKEN,
      DATABASE_URL: withPassword(databaseUrl, PLANTED.DB_PASSWORD),
    });
    const configPath = path.join(t.home, 'config.json');
    fs.writeFileSync(
      configPath,
      `${JSON.stringify({ database_url: withPassword(databaseUrl, PLANTED.CONFIG_DB_PASSWORD) })}\n`,
    );
    TURNS = turnsFor(configPath);
    const result = await runCli(
      goalArgs('run', 'look at the environment', t, server, ['--sandbox', 'off', '--json']),
      t.env,
    );
    expect(result.code, result.stderr).toBe(0);
    const status = JSON.parse(result.stdout);
    expect(status.status).toBe('completed');

    // The provider: the key only where it belongs, never in a body; the outputs say [REDACTED].
    const bodies = server.requests.map((request) => JSON.stringify(request.body)).join('\n');
    expect(server.requests.length).toBeGreaterThanOrEqual(TURNS.length);
    // The endpoint's own key (issue 24 §8), never OPENAI_API_KEY.
    expect(server.requests[0].headers.authorization).toBe(`Bearer ${PLANTED.OPENAI_COMPATIBLE_API_KEY}`);
    expect(JSON.stringify(server.requests.map((request) => request.headers))).not.toContain(
      PLANTED.OPENAI_API_KEY,
    );
    expect(bodies).toContain('DEPLOY_TOKEN=');
    expect(bodies).toContain(REDACTED);
    for (const value of Object.values(PLANTED)) expect(bodies).not.toContain(value);

    // The cat of the config file ran and showed the file, with its password redacted.
    const pg = new Client({ connectionString: databaseUrl });
    await pg.connect();
    try {
      const { rows } = await pg.query<{ content: Array<{ output: { value: string } }> }>(
        "SELECT content FROM messages WHERE session_id = $1 AND role = 'tool' ORDER BY seq",
        [status.sessionId],
      );
      const catOfConfig = rows[2].content[0].output.value;
      expect(catOfConfig).toContain('"database_url"');
      expect(catOfConfig).toContain(REDACTED);
    } finally {
      await pg.end();
    }

    // The store, as pg_dump writes it: schema and every row of every table.
    const stored = pgDump(databaseUrl);
    expect(stored).toContain('look at the environment');
    expect(stored).toContain(REDACTED);
    for (const value of Object.values(PLANTED)) expect(stored).not.toContain(value);

    // status says the goal ran without a sandbox.
    const shown = await runCli(['status', status.sessionId], t.env);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain("sandbox    OFF: tool commands run with the worker's own rights");

    // The Temporal history, the worker's log and what the CLI printed.
    const history = allText(await fetchHistory(t.temporalAddress, status.workflowId)).join('\n');
    expect(history).toContain('bash');
    const log = fs.readFileSync(path.join(t.home, 'logs', 'worker.log'), 'utf8');
    for (const value of Object.values(PLANTED)) {
      expect(history).not.toContain(value);
      expect(log).not.toContain(value);
      expect(result.stdout + result.stderr).not.toContain(value);
    }
  }, 180_000);
});
