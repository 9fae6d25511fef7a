/**
 * Whether bubblewrap can start a sandbox on this machine: installed, and allowed to create the
 * namespaces it needs. Asked once per worker process (a failure is asked again after a while, so
 * installing bubblewrap needs no restart).
 */
import { execFile } from 'node:child_process';
import type { SandboxHost } from './host';

/** How long the probe sandbox may take to start and exit. */
const PROBE_TIMEOUT_MS = 10_000;
/** A failed probe is trusted this long before it is tried again. */
const PROBE_FAILURE_TTL_MS = 30_000;

/** The fix named when the sandbox cannot start. */
export const SANDBOX_FIX =
  'install bubblewrap (apt-get install bubblewrap) and allow unprivileged user namespaces, or run the goal with --sandbox off';

/** Result of a probe: ok, or the one line that says what is wrong and how to fix it. */
export type SandboxProbe = { ok: true; version: string } | { ok: false; problem: string };

/** The smallest sandbox with every namespace goalrun uses. */
const PROBE_ARGS = [
  '--die-with-parent',
  '--new-session',
  '--cap-drop',
  'ALL',
  '--unshare-pid',
  '--unshare-ipc',
  '--unshare-net',
  '--ro-bind',
  '/',
  '/',
  '--dev',
  '/dev',
  '--proc',
  '/proc',
  '--',
  'true',
];

function run(file: string, args: string[]): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(
      file,
      args,
      { timeout: PROBE_TIMEOUT_MS, env: { PATH: '/usr/bin:/bin' } },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        const output = `${stderr}${stdout}`.trim() || (error ? error.message : '');
        resolve({ code, output });
      },
    );
  });
}

/** Probes bubblewrap now (no cache). */
export async function probeSandbox(bwrapPath: string | null): Promise<SandboxProbe> {
  if (!bwrapPath) {
    return {
      ok: false,
      problem:
        'sandbox unavailable: bubblewrap (bwrap) is not installed; install it (apt-get install bubblewrap) or run the goal with --sandbox off (its tools then run unsandboxed)',
    };
  }
  const version = await run(bwrapPath, ['--version']);
  const started = await run(bwrapPath, PROBE_ARGS);
  if (started.code !== 0) {
    const reason = started.output.split('\n')[0] || `exit code ${started.code}`;
    return {
      ok: false,
      problem: `sandbox unavailable: bubblewrap cannot start a sandbox here (${reason}); ${SANDBOX_FIX}`,
    };
  }
  return { ok: true, version: version.output.split('\n')[0] || 'bubblewrap' };
}

const cache = new Map<string, { at: number; probe: Promise<SandboxProbe> }>();

/** Probes bubblewrap once per process; failures are probed again after a while. */
export function checkSandbox(host: SandboxHost): Promise<SandboxProbe> {
  const key = host.bwrapPath ?? '';
  const cached = cache.get(key);
  if (cached) {
    const expired = Date.now() - cached.at > PROBE_FAILURE_TTL_MS;
    if (!expired) return cached.probe;
    return cached.probe.then((probe) => (probe.ok ? probe : refresh(key, host)));
  }
  return refresh(key, host);
}

function refresh(key: string, host: SandboxHost): Promise<SandboxProbe> {
  const probe = probeSandbox(host.bwrapPath);
  cache.set(key, { at: Date.now(), probe });
  return probe;
}
