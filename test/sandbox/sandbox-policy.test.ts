/**
 * The sandbox policy against real bubblewrap: what a command can read, write and reach. The test
 * directories live under /var/tmp, not /tmp, so that nothing passes merely because the sandbox
 * has its own /tmp.
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SandboxHost, sandboxHostFromEnv } from '../../activities/sandbox/host';
import { runBash } from '../../activities/tools/bash';
import { JobManager } from '../../activities/tools/jobs';
import { DEFAULT_SANDBOX, type SandboxSettings } from '../../core/sandbox-settings';
import { makeContext } from '../tools/helpers';

const root = mkdtempSync('/var/tmp/goalrun-sandbox-test-');
const home = path.join(root, 'home');
const goalrunHome = path.join(home, '.goalrun');
const installDir = path.join(root, 'install');
const workspace = path.join(home, 'project');
const outside = path.join(root, 'outside');
/** The account's home from the password database, standing in for it while HOME points elsewhere. */
const accountHome = path.join(root, 'account');
const PLANTED = 'planted-secret-value-4711';

function hostWith(overrides: Partial<SandboxHost> = {}): SandboxHost {
  return {
    ...sandboxHostFromEnv(
      { ...process.env, HOME: home, GOALRUN_HOME: goalrunHome, PLANTED_TOKEN: PLANTED },
      accountHome,
    ),
    installDir,
    stateDir: path.join(root, 'state'),
    ...overrides,
  };
}

const jobs = new JobManager({ host: hostWith() });

async function bash(
  command: string,
  sandbox: Partial<SandboxSettings> = {},
  extra: Partial<Parameters<typeof makeContext>[1]> = {},
) {
  return runBash(
    { command },
    makeContext(workspace, {
      sandbox: { ...DEFAULT_SANDBOX, ...sandbox },
      jobs,
      sessionId: 'policy',
      ...extra,
    }),
  );
}

beforeAll(() => {
  for (const dir of [home, goalrunHome, installDir, workspace, outside, path.join(home, '.ssh')])
    mkdirSync(dir, { recursive: true });
  for (const dir of [
    path.join(accountHome, '.ssh'),
    path.join(accountHome, '.aws'),
    path.join(accountHome, 'src'),
  ])
    mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(home, '.ssh', 'id_ed25519'), `${PLANTED}\n`);
  writeFileSync(path.join(accountHome, '.ssh', 'id_rsa'), `${PLANTED}\n`);
  writeFileSync(path.join(accountHome, '.aws', 'credentials'), `aws_secret_access_key=${PLANTED}\n`);
  writeFileSync(path.join(accountHome, 'notes.txt'), `${PLANTED}\n`);
  writeFileSync(path.join(home, '.bashrc'), 'original\n');
  writeFileSync(path.join(goalrunHome, 'config.json'), `{"database_url":"postgres://u:${PLANTED}@h/db"}\n`);
  writeFileSync(path.join(installDir, 'package.json'), '{"name":"goalrun"}\n');
  chmodSync(root, 0o755);
});

afterAll(async () => {
  await jobs.killSession('policy');
  rmSync(root, { recursive: true, force: true });
});

describe('workspace-write sandbox', () => {
  it('writes in the workspace', async () => {
    const outcome = await bash('echo made > made.txt && cat made.txt');
    expect(outcome.output).toBe('made\n[exit code 0]');
    expect(readFileSync(path.join(workspace, 'made.txt'), 'utf8')).toBe('made\n');
  });

  it('refuses writes outside the workspace, to the real home and to the root file system', async () => {
    const target = path.join(outside, 'x.txt');
    const outcome = await bash(
      `echo x > ${target}; echo x > ${home}/.bashrc; echo x > /etc/goalrun-escape; touch ${root}/escape`,
    );
    expect(outcome.ok).toBe(false);
    expect(outcome.output.match(/Read-only file system/g)?.length).toBe(4);
    expect(existsSync(target)).toBe(false);
    expect(readFileSync(path.join(home, '.bashrc'), 'utf8')).toBe('original\n');
    expect(existsSync('/etc/goalrun-escape')).toBe(false);
  });

  it('hides $HOME and $GOALRUN_HOME: no keys, no config', async () => {
    const outcome = await bash(
      `ls -A ${home}; cat ${home}/.ssh/id_ed25519 ${goalrunHome}/config.json; echo HOME=$HOME`,
    );
    expect(outcome.output).not.toContain(PLANTED);
    expect(outcome.output).toContain('No such file or directory');
    // Only the workspace's mount point shows in the hidden home.
    expect(outcome.output.split('\n')[0]).toBe('project');
    expect(outcome.output).toContain('HOME=/tmp/home');
  });

  it("hides the account's real home too when HOME points elsewhere", async () => {
    const outcome = await bash(
      `ls -A ${accountHome}; cat ${accountHome}/.ssh/id_rsa ${accountHome}/.aws/credentials ${accountHome}/notes.txt`,
    );
    expect(outcome.output).not.toContain(PLANTED);
    expect(outcome.output.split('\n')[0]).toMatch(/^cat: /);
    expect(outcome.output.match(/No such file or directory/g)?.length).toBe(3);
  });

  it('still binds a workspace inside the real home, or the real home itself, writable, with its keys hidden', async () => {
    for (const dir of [path.join(accountHome, 'src'), accountHome]) {
      const outcome = await runBash(
        {
          command: `echo made > made.txt && cat made.txt; cat ${accountHome}/.ssh/id_rsa; ls -A ${accountHome}/.aws`,
        },
        makeContext(dir, { sandbox: DEFAULT_SANDBOX, jobs, sessionId: 'policy' }),
      );
      expect(outcome.output).toMatch(/^made\n/);
      expect(readFileSync(path.join(dir, 'made.txt'), 'utf8')).toBe('made\n');
      expect(outcome.output).not.toContain(PLANTED);
      expect(outcome.output).toContain('No such file or directory');
      rmSync(path.join(dir, 'made.txt'));
    }
  });

  it('gives $HOME as a private directory inside the private /tmp', async () => {
    const outcome = await bash('echo mine > ~/.bashrc && cat ~/.bashrc');
    expect(outcome.output).toBe('mine\n[exit code 0]');
    expect(readFileSync(path.join(home, '.bashrc'), 'utf8')).toBe('original\n');
  });

  it('keeps goalrun itself read-only even inside the workspace', async () => {
    const nested = path.join(workspace, 'vendor', 'goalrun');
    mkdirSync(nested, { recursive: true });
    const local = new JobManager({ host: hostWith({ installDir: nested }) });
    const outcome = await runBash(
      { command: `echo hacked > ${nested}/index.js` },
      makeContext(workspace, { jobs: local, sessionId: 'policy' }),
    );
    expect(outcome.output).toContain('Read-only file system');
    expect(existsSync(path.join(nested, 'index.js'))).toBe(false);
  });

  it('shares /tmp between the calls of one goal, not with the host or another goal', async () => {
    const marker = `tmp-${Date.now()}`;
    await bash(`echo ${marker} > /tmp/shared.txt`);
    expect((await bash('cat /tmp/shared.txt')).output).toBe(`${marker}\n[exit code 0]`);
    expect(existsSync('/tmp/shared.txt') && readFileSync('/tmp/shared.txt', 'utf8').includes(marker)).toBe(
      false,
    );
    const other = await bash('cat /tmp/shared.txt', {}, { sessionId: 'policy-other' });
    expect(other.output).toContain('No such file or directory');
    await jobs.killSession('policy-other');
  });

  it("cannot see the worker's processes or their environment", async () => {
    const outcome = await bash(
      `cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n' | grep -c PLANTED_TOKEN; ls /proc | grep -cE '^[0-9]+$'`,
    );
    expect(outcome.output).not.toContain(PLANTED);
    const [matches, processes] = outcome.output.split('\n');
    expect(matches).toBe('0');
    // bwrap's init, bash, the pipeline: a handful, not the host's hundreds.
    expect(Number(processes)).toBeLessThan(10);
    const env = await bash('env');
    expect(env.output).not.toContain(PLANTED);
  });
});

describe('the homes a sandbox hides', () => {
  it("are $HOME and the account's home from the password database, once each", () => {
    const real = os.userInfo().homedir;
    expect(sandboxHostFromEnv({ HOME: home }).homes).toEqual([home, real]);
    expect(sandboxHostFromEnv({ HOME: real }).homes).toEqual([real]);
  });
});

describe('network', () => {
  let server: net.Server;
  let port: number;
  beforeAll(async () => {
    server = net.createServer((socket) => socket.end('hello from the host\n'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as net.AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const connect = () => `exec 3<>/dev/tcp/127.0.0.1/${port} && cat <&3`;

  it('is off by default: a server on the host loopback is unreachable', async () => {
    const outcome = await bash(connect());
    expect(outcome.ok).toBe(false);
    expect(outcome.output).toContain('Connection refused');
    expect(outcome.output).not.toContain('hello from the host');
  });

  it('is shared when network is true', async () => {
    const outcome = await bash(connect(), { network: true });
    expect(outcome.output).toBe('hello from the host\n[exit code 0]');
  });

  it("hides the host's Unix sockets (a database's, Docker's) while the network is off", async () => {
    const socketPath = `/run/goalrun-policy-${process.pid}.sock`;
    const unix = net.createServer((socket) => socket.end('hello over a unix socket\n'));
    await new Promise<void>((resolve) => unix.listen(socketPath, resolve));
    try {
      const client = `node -e "require('net').connect('${socketPath}').on('data', (d) => process.stdout.write(d)).on('error', (e) => console.log(e.code))"`;
      const off = await bash(client);
      expect(off.output).toContain('ENOENT');
      expect(off.output).not.toContain('hello over a unix socket');
      const on = await bash(client, { network: true });
      expect(on.output).toContain('hello over a unix socket');
    } finally {
      await new Promise<void>((resolve) => unix.close(() => resolve()));
    }
  });
});

describe('read-only sandbox', () => {
  it('refuses writes to the workspace too, but /tmp stays writable', async () => {
    const outcome = await bash('echo x > ro.txt; echo y > /tmp/ok.txt && cat /tmp/ok.txt', {
      mode: 'read-only',
    });
    expect(outcome.output).toContain('Read-only file system');
    expect(outcome.output).toContain('y\n');
    expect(existsSync(path.join(workspace, 'ro.txt'))).toBe(false);
  });
});

describe('when the sandbox cannot start', () => {
  it('fails with one line naming the fix when bubblewrap is missing, and runs nothing', async () => {
    const missing = new JobManager({ host: hostWith({ bwrapPath: null }) });
    const outcome = await runBash(
      { command: 'touch ran.txt' },
      makeContext(workspace, { jobs: missing, sessionId: 'policy' }),
    );
    expect(outcome.ok).toBe(false);
    expect(outcome.output.split('\n')).toHaveLength(1);
    expect(outcome.output).toMatch(
      /bubblewrap \(bwrap\) is not installed.*apt-get install bubblewrap.*--sandbox off/,
    );
    expect(existsSync(path.join(workspace, 'ran.txt'))).toBe(false);
  });

  it('fails with one line when bubblewrap cannot create namespaces', async () => {
    const fake = path.join(root, 'fake-bwrap');
    writeFileSync(fake, '#!/bin/sh\necho "bwrap: No permissions to create new namespace" >&2\nexit 1\n', {
      mode: 0o755,
    });
    const broken = new JobManager({ host: hostWith({ bwrapPath: fake }) });
    const outcome = await runBash(
      { command: 'touch ran.txt' },
      makeContext(workspace, { jobs: broken, sessionId: 'policy' }),
    );
    expect(outcome.ok).toBe(false);
    expect(outcome.output).toBe(
      'sandbox unavailable: bubblewrap cannot start a sandbox here (bwrap: No permissions to create new namespace); ' +
        'install bubblewrap (apt-get install bubblewrap) and allow unprivileged user namespaces, or run the goal with --sandbox off',
    );
    expect(existsSync(path.join(workspace, 'ran.txt'))).toBe(false);
  });

  it('runs unsandboxed only when asked by name (off) or for one approved escalation', async () => {
    const target = path.join(outside, 'escalated.txt');
    const off = await bash(`echo off > ${target}`, { mode: 'off' });
    expect(off.output).toBe('[exit code 0]');
    rmSync(target);
    const escalated = await bash(`echo esc > ${target}`, {}, { escalated: true });
    expect(escalated.output).toBe('[exit code 0]');
    expect(readFileSync(target, 'utf8')).toBe('esc\n');
  });
});
