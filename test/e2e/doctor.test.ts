/**
 * Issue 8, acceptance 7: `goalrun doctor` as a user runs it. On a ready machine it reports
 * bubblewrap, the temporal binary, the database and the provider keys as ok, one line each, and
 * exits 0. Each item made missing through the environment (PATH without bwrap, a bwrap that cannot
 * start a sandbox, a bad TEMPORAL_CLI_PATH, a database that does not answer, no keys) is reported
 * missing with its fix; a missing required item makes it exit 1.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli, tempDir } from '../support/cli';
import { goalTestEnv } from '../support/goal-env';

const ITEMS = [
  'bubblewrap',
  'resource limits',
  'ripgrep',
  'temporal CLI',
  'database',
  'OPENAI_API_KEY',
  'ANTHROPIC_API_KEY',
  // Which key an openai-compatible endpoint gets (issue 24 §8).
  'openai-compatible key',
  // Which config files were read (issue 17: the global one, then the project's).
  'config files',
  // Issue 30: how many goals a worker of this machine keeps in memory.
  'worker memory',
  // Issue 29: where each Temporal setting came from, and whether the server answers with them.
  'Temporal connection',
  'Temporal server',
  // The workspace's (the current directory's) instructions and hooks; no MCP server is configured here.
  'project instructions',
  'hooks',
];
const OPENAI_KEY = 'sk-doctor-openai-77aa';
const DB_PASSWORD = 'doctor-db-secret-31';

/** The doctor's line for an item. */
function lineOf(stdout: string, item: string): string {
  const lines = stdout.split('\n').filter((line) => new RegExp(`^(ok|missing) +${item}: `).test(line));
  expect(lines, `one line for ${item} in:\n${stdout}`).toHaveLength(1);
  return lines[0];
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('goalrun doctor', () => {
  const t = goalTestEnv('doctor');
  const temporal = process.env.TEMPORAL_CLI_PATH as string;
  const emptyCache = tempDir('doctor-cache');
  /** A PATH that has neither bwrap nor rg nor temporal. */
  const barePath = tempDir('doctor-bare-path');
  /** A PATH whose bwrap is there but cannot start a sandbox, as under a kernel without user namespaces. */
  const brokenPath = tempDir('doctor-broken-bwrap');

  beforeAll(() => {
    fs.writeFileSync(
      path.join(brokenPath, 'bwrap'),
      '#!/bin/sh\n[ "$1" = --version ] && { echo "bubblewrap 0.8.0"; exit 0; }\necho "bwrap: setting up uid map: Permission denied" >&2\nexit 1\n',
      { mode: 0o755 },
    );
  });

  it('reports every item ok, one line each, on a ready machine', async () => {
    expect(temporal, 'TEMPORAL_CLI_PATH must be set for the tests').toBeTruthy();
    const result = await runCli(['doctor'], {
      ...t.env,
      TEMPORAL_CLI_PATH: temporal,
      OPENAI_API_KEY: OPENAI_KEY,
      ANTHROPIC_API_KEY: 'sk-ant-doctor-12',
    });
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout.trim().split('\n')).toHaveLength(ITEMS.length);
    expect(lineOf(result.stdout, 'worker memory')).toMatch(/\d+ goals fit in the workflow cache \(/);
    expect(lineOf(result.stdout, 'bubblewrap')).toMatch(
      /^ok +bubblewrap: bubblewrap \S+ at \/\S*bwrap starts a sandbox here$/,
    );
    expect(lineOf(result.stdout, 'temporal CLI')).toBe(`ok       temporal CLI: ${path.resolve(temporal)}`);
    // Which mechanism limits each tool call here (this machine: cgroup v1 memory and pids, RLIMIT_CPU).
    expect(lineOf(result.stdout, 'resource limits')).toMatch(
      /^ok +resource limits: memory by (cgroup v[12] memory|RLIMIT_DATA \(prlimit\)), process count by (cgroup v[12] pids\.max|RLIMIT_NPROC \(prlimit\)), CPU time by RLIMIT_CPU \(prlimit\)$/,
    );
    expect(lineOf(result.stdout, 'database')).toMatch(/^ok +database: PostgreSQL at .* answers$/);
    expect(lineOf(result.stdout, 'Temporal connection')).toBe(
      `ok       Temporal connection: address ${t.env.TEMPORAL_ADDRESS} (TEMPORAL_ADDRESS); namespace default (default); TLS off; no API key`,
    );
    expect(lineOf(result.stdout, 'Temporal server')).toMatch(
      new RegExp(
        `^ok +Temporal server: answers at ${t.env.TEMPORAL_ADDRESS} \\(server [0-9.]+\\); namespace default exists$`,
      ),
    );
    expect(lineOf(result.stdout, 'OPENAI_API_KEY')).toMatch(/^ok +OPENAI_API_KEY: set/);
    expect(lineOf(result.stdout, 'ANTHROPIC_API_KEY')).toMatch(/^ok +ANTHROPIC_API_KEY: set/);
    // "set" is all it says about a key.
    expect(result.stdout).not.toContain(OPENAI_KEY);
  });

  it('names the fix of each missing item and exits 1 when a required one is missing', async () => {
    const databaseUrl = `postgres://goalrun:${DB_PASSWORD}@127.0.0.1:${await closedPort()}/goalrun`;
    const result = await runCli(['doctor'], {
      ...t.env,
      PATH: barePath,
      TEMPORAL_CLI_PATH: '/nonexistent/temporal',
      GOALRUN_CACHE_DIR: emptyCache,
      DATABASE_URL: databaseUrl,
    });
    expect(result.code, result.stdout + result.stderr).toBe(1);
    expect(lineOf(result.stdout, 'bubblewrap')).toMatch(
      /^missing +bubblewrap: not installed.*; fix: apt-get install bubblewrap \(or run goals with --sandbox off\)$/,
    );
    expect(lineOf(result.stdout, 'temporal CLI')).toMatch(
      /^missing +temporal CLI: TEMPORAL_CLI_PATH=\/nonexistent\/temporal is not an executable file; fix: point TEMPORAL_CLI_PATH at the temporal binary, or unset it and run npm run temporal/,
    );
    expect(lineOf(result.stdout, 'database')).toMatch(
      /^missing +database: .*cannot connect \(.*\); fix: start PostgreSQL or correct DATABASE_URL/,
    );
    expect(lineOf(result.stdout, 'OPENAI_API_KEY')).toMatch(
      /^missing +OPENAI_API_KEY: not set.*; fix: export OPENAI_API_KEY=/,
    );
    expect(lineOf(result.stdout, 'ANTHROPIC_API_KEY')).toMatch(
      /^missing +ANTHROPIC_API_KEY: not set.*; fix: export ANTHROPIC_API_KEY=/,
    );
    expect(result.stdout + result.stderr).not.toContain(DB_PASSWORD);

    // No TEMPORAL_CLI_PATH at all this time: nothing on PATH, nothing in the cache.
    const bare: NodeJS.ProcessEnv = { ...t.env, PATH: barePath, GOALRUN_CACHE_DIR: emptyCache };
    delete bare.TEMPORAL_CLI_PATH;
    const json = await runCli(['doctor', '--json'], bare);
    expect(json.code).toBe(1);
    const { checks } = JSON.parse(json.stdout);
    expect(checks.map((check: { name: string }) => check.name)).toEqual(ITEMS);
    expect(checks.find((check: { name: string }) => check.name === 'temporal CLI')).toMatchObject({
      ok: false,
      detail: expect.stringContaining('not found'),
      fix: expect.stringContaining('npm run temporal'),
    });
  });

  it('tells a bwrap that cannot sandbox from a missing one; with --sandbox off it is not required', async () => {
    const env = { ...t.env, PATH: brokenPath, TEMPORAL_CLI_PATH: temporal };
    const broken = await runCli(['doctor'], env);
    expect(broken.code).toBe(1);
    expect(lineOf(broken.stdout, 'bubblewrap')).toBe(
      `missing  bubblewrap: ${brokenPath}/bwrap cannot start a sandbox here (bwrap: setting up uid map: Permission denied); ` +
        'fix: allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, or run as root), or run goals with --sandbox off',
    );
    const off = await runCli(['doctor', '--sandbox', 'off'], env);
    expect(off.code, off.stdout).toBe(0);
    expect(lineOf(off.stdout, 'bubblewrap')).toMatch(/^missing +bubblewrap: /);
  });

  it('names a --profile (after the command, too) that temporal.toml does not have, and what it has', async () => {
    const toml = path.join(tempDir('doctor-toml'), 'temporal.toml');
    fs.writeFileSync(toml, '[profile.prod]\naddress = "temporal.example:7233"\n');
    const result = await runCli(['doctor', '--profile', 'staging'], { ...t.env, TEMPORAL_CONFIG_FILE: toml });
    expect(result.code).toBe(1);
    expect(lineOf(result.stdout, 'Temporal connection')).toBe(
      `missing  Temporal connection: --profile names the profile "staging", which ${toml} does not have (it has "prod"); ` +
        'fix: correct the temporal.toml profile or the TEMPORAL_* variables (docs/deploying.md)',
    );
  });

  it('says when TEMPORAL_CLI_PATH is wrong even though goalrun falls back to another binary', async () => {
    const result = await runCli(['doctor'], {
      ...t.env,
      TEMPORAL_CLI_PATH: '/nonexistent/temporal',
      PATH: `${path.dirname(temporal)}:${process.env.PATH}`,
    });
    expect(lineOf(result.stdout, 'temporal CLI')).toBe(
      `missing  temporal CLI: TEMPORAL_CLI_PATH=/nonexistent/temporal is not an executable file (goalrun falls back to ${path.resolve(temporal)}); fix: point TEMPORAL_CLI_PATH at the temporal binary, or unset it`,
    );
    // Not required: the database and bubblewrap are fine, so the machine can run goals.
    expect(result.code, result.stdout).toBe(0);
  });

  it('starts each MCP server of a workspace, lists its tools, reports the ones that fail, and names the AGENTS.md in effect', async () => {
    const workspace = tempDir('doctor-ws');
    fs.writeFileSync(path.join(workspace, 'AGENTS.md'), 'RULE\n');
    const mcpConfig = path.join(tempDir('doctor-mcp'), 'mcp.json');
    const server = path.resolve(__dirname, '../support/crashing-mcp-server.js');
    fs.writeFileSync(
      mcpConfig,
      JSON.stringify({
        mcpServers: {
          crashing: { command: 'node', args: [server] },
          broken: { command: 'no-such-mcp-server' },
        },
      }),
    );
    const result = await runCli(['doctor', '--workspace', workspace, '--mcp-config', mcpConfig], {
      ...t.env,
      TEMPORAL_CLI_PATH: temporal,
    });
    expect(lineOf(result.stdout, 'project instructions')).toBe(
      'ok       project instructions: AGENTS.md (4 bytes)',
    );
    expect(lineOf(result.stdout, 'mcp server crashing')).toBe(
      'ok       mcp server crashing: 3 tools (stdio, in the sandbox; from mcp-config)',
    );
    expect(lineOf(result.stdout, 'mcp server broken')).toMatch(
      /^missing +mcp server broken: stdio, in the sandbox: could not start MCP server "broken": .*no-such-mcp-server.*; fix: /,
    );
    // Optional items: the machine can still run goals.
    expect(result.code, result.stdout).toBe(0);
  });
});
