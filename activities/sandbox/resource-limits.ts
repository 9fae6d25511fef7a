/**
 * Resource limits of one tool call: memory, process count, CPU time. A cgroup per call where this
 * worker may create cgroups (v2, or the v1 memory and pids hierarchies), so that the limit covers
 * the whole call and an overrun is seen (memory.events oom_kill, pids.events max); CPU time, and
 * whatever no cgroup covers, through rlimits set by `prlimit` (util-linux), which every process of
 * the call inherits. RLIMIT_NPROC counts per real uid and never applies to root: a worker running as
 * root without a pids cgroup has no process limit, and `doctor` says so.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { ResourceLimits } from '../../core/sandbox-settings';
import { findExecutable } from './host';

/** Where cgroup file systems are mounted. */
const CGROUP_ROOT = '/sys/fs/cgroup';
/** The directory under the worker's own cgroup that holds one cgroup per tool call. */
const CALLS_DIR = 'goalrun-tools';
/** An empty call cgroup older than this is removed by the next call (one whose cleanup never ran). */
const STALE_CGROUP_MS = 60_000;
const MIB = 1024 * 1024;
/** How long a call's cleanup waits for its killed processes to leave the cgroup. */
const CGROUP_EMPTY_WAIT_MS = 3_000;
const CGROUP_POLL_MS = 25;
/** CPU seconds between RLIMIT_CPU's SIGXCPU (soft) and its SIGKILL (hard), for a process that ignores the first. */
const CPU_KILL_GRACE_SECONDS = 5;

/** How this machine limits a tool call. */
export interface LimitMechanism {
  /** The cgroup version in use, or undefined when none can be created here. */
  cgroup?: 'v2' | 'v1';
  /** Parent directories of the call cgroups: one for v2, the memory and pids hierarchies for v1. */
  memoryParent?: string;
  pidsParent?: string;
  /** `prlimit`'s path, or null when util-linux is missing (then only cgroups limit). */
  prlimit: string | null;
  /** Whether RLIMIT_NPROC means anything here (not root). */
  nprocApplies: boolean;
}

/** One line for doctor: which mechanism limits memory, processes and CPU time here. */
export function describeMechanism(mechanism: LimitMechanism): { ok: boolean; detail: string } {
  const rlimit = mechanism.prlimit ? 'rlimit (prlimit)' : undefined;
  const memory = mechanism.memoryParent
    ? `cgroup ${mechanism.cgroup} memory`
    : rlimit
      ? 'RLIMIT_DATA (prlimit)'
      : undefined;
  const processes = mechanism.pidsParent
    ? `cgroup ${mechanism.cgroup} pids.max`
    : rlimit && mechanism.nprocApplies
      ? 'RLIMIT_NPROC (prlimit)'
      : undefined;
  const cpu = rlimit ? 'RLIMIT_CPU (prlimit)' : undefined;
  const parts = [
    `memory by ${memory ?? 'nothing'}`,
    `process count by ${processes ?? 'nothing (root without a writable pids cgroup)'}`,
    `CPU time by ${cpu ?? 'nothing (prlimit missing)'}`,
  ];
  return { ok: Boolean(memory && processes && cpu), detail: parts.join(', ') };
}

/** The worker's own cgroup path in a hierarchy (`0::/x` for v2, `N:memory:/x` for v1). */
function ownCgroup(controller: string | undefined): string | undefined {
  try {
    for (const line of readFileSync('/proc/self/cgroup', 'utf8').split('\n')) {
      const [, controllers, where] = line.split(':');
      if (where === undefined) continue;
      if (controller === undefined ? controllers === '' : controllers.split(',').includes(controller))
        return where;
    }
  } catch {
    // no /proc: no cgroups
  }
  return undefined;
}

/** Makes (or reuses) `<dir>/goalrun-tools` and checks a child of it can be made; its path, or undefined. */
function callsParent(dir: string, files: readonly string[]): string | undefined {
  const parent = path.join(dir, CALLS_DIR);
  const probe = path.join(parent, `probe-${process.pid}`);
  try {
    mkdirSync(parent, { recursive: true });
    mkdirSync(probe);
    const made = readdirSync(probe);
    rmdirSync(probe);
    return files.every((file) => made.includes(file)) ? parent : undefined;
  } catch {
    return undefined;
  }
}

/** A v2 hierarchy where child cgroups get the memory and pids controllers. */
function cgroupV2(root: string): string | undefined {
  const own = ownCgroup(undefined);
  if (own === undefined) return undefined;
  for (const base of [root, path.join(root, 'unified')]) {
    try {
      statSync(path.join(base, 'cgroup.controllers'));
    } catch {
      continue;
    }
    const dir = path.join(base, own);
    const parent = path.join(dir, CALLS_DIR);
    try {
      mkdirSync(parent, { recursive: true });
      // Controllers must be enabled top-down; a cgroup with processes in it may refuse (no internal processes).
      writeFileSync(path.join(parent, 'cgroup.subtree_control'), '+memory +pids');
    } catch {
      // not delegated to us
    }
    const found = callsParent(dir, ['memory.max', 'pids.max']);
    if (found) return found;
    try {
      rmdirSync(parent);
    } catch {
      // in use by an earlier worker, or never made
    }
  }
  return undefined;
}

/** Finds how tool calls are limited here (asked once per worker; see {@link limitMechanism}). */
export function detectLimitMechanism(root: string = CGROUP_ROOT): LimitMechanism {
  const prlimit = findExecutable('prlimit', { PATH: '/usr/bin:/bin:/usr/sbin:/sbin' });
  const nprocApplies = typeof process.getuid === 'function' && process.getuid() !== 0;
  const v2 = cgroupV2(root);
  if (v2) return { cgroup: 'v2', memoryParent: v2, pidsParent: v2, prlimit, nprocApplies };
  const memoryOwn = ownCgroup('memory');
  const pidsOwn = ownCgroup('pids');
  const memoryParent =
    memoryOwn === undefined
      ? undefined
      : callsParent(path.join(root, 'memory', memoryOwn), ['memory.limit_in_bytes', 'memory.oom_control']);
  const pidsParent =
    pidsOwn === undefined
      ? undefined
      : callsParent(path.join(root, 'pids', pidsOwn), ['pids.max', 'pids.events']);
  const cgroup = memoryParent || pidsParent ? 'v1' : undefined;
  return { cgroup, memoryParent, pidsParent, prlimit, nprocApplies };
}

let processMechanism: LimitMechanism | undefined;

/** The mechanism of this worker process (detected once). */
export function limitMechanism(): LimitMechanism {
  processMechanism ??= detectLimitMechanism();
  return processMechanism;
}

/** Which limit a call went over. */
export type LimitHit = 'memory' | 'processes' | 'cpu';

/** The cgroups of one call: the files its first process joins, what it went over, and their removal. */
export interface CallLimits {
  /** The wrapper to start instead of the command: it joins the cgroups and sets the rlimits. */
  wrap(file: string, args: readonly string[]): { file: string; args: string[] };
  /** The limit a cgroup saw the call go over (memory: an OOM kill; processes: a refused fork). */
  overLimit(): LimitHit | undefined;
  /** Kills what is left in the call's cgroups and removes them; never throws. */
  cleanup(): Promise<void>;
}

let callCounter = 0;

/** Removes empty call cgroups left by calls whose cleanup never ran (a crash); busy ones stay. */
function sweepStale(parent: string): void {
  let names: string[] = [];
  try {
    names = readdirSync(parent);
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith('call-')) continue;
    const dir = path.join(parent, name);
    try {
      if (Date.now() - statSync(dir).mtimeMs > STALE_CGROUP_MS) rmdirSync(dir);
    } catch {
      // still in use, or gone
    }
  }
}

function counter(file: string, key: string): number {
  try {
    const match = new RegExp(`^${key} (\\d+)$`, 'm').exec(readFileSync(file, 'utf8'));
    return match ? Number(match[1]) : 0;
  } catch {
    return 0;
  }
}

/** The pids in a cgroup. */
function pidsIn(dir: string): number[] {
  try {
    return readFileSync(path.join(dir, 'cgroup.procs'), 'utf8')
      .split('\n')
      .filter((line) => line !== '')
      .map(Number);
  } catch {
    return [];
  }
}

/**
 * Kills what is left in a call's cgroup (a process that left the tool's process group and its
 * sandbox's) and removes it once the kernel has let the processes go.
 */
async function removeCgroup(dir: string): Promise<void> {
  const deadline = Date.now() + CGROUP_EMPTY_WAIT_MS;
  for (;;) {
    for (const pid of pidsIn(dir)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    try {
      rmdirSync(dir);
      return;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // EBUSY: exiting processes still count; the next call's sweep removes it if they never go.
      if (code !== 'EBUSY' || Date.now() > deadline) return;
    }
    await delay(CGROUP_POLL_MS);
  }
}

/** Joins each cgroup (its `cgroup.procs`) with the shell's own pid, then execs the rest (same pid). */
const JOIN_SCRIPT = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"';

/** Sets up the limits of one call; a cgroup that cannot be made leaves that limit to the rlimits. */
export function limitCall(limits: ResourceLimits, mechanism: LimitMechanism = limitMechanism()): CallLimits {
  const name = `call-${process.pid}-${++callCounter}`;
  const bytes = limits.memoryMb * MIB;
  const made: string[] = [];
  const make = (parent: string | undefined, files: Record<string, string>): string | undefined => {
    if (!parent) return undefined;
    sweepStale(parent);
    const dir = path.join(parent, name);
    try {
      if (!made.includes(dir)) {
        mkdirSync(dir);
        made.push(dir);
      }
      for (const [file, value] of Object.entries(files)) writeFileSync(path.join(dir, file), value);
      return dir;
    } catch {
      return undefined;
    }
  };
  const v2 = mechanism.cgroup === 'v2';
  const memoryDir = make(
    mechanism.memoryParent,
    v2 ? { 'memory.max': String(bytes), 'memory.swap.max': '0' } : { 'memory.limit_in_bytes': String(bytes) },
  );
  const pidsDir = make(mechanism.pidsParent, { 'pids.max': String(limits.maxProcesses) });
  const oomBefore = memoryDir
    ? counter(path.join(memoryDir, v2 ? 'memory.events' : 'memory.oom_control'), 'oom_kill')
    : 0;
  const rlimits = [`--cpu=${limits.cpuSeconds}:${limits.cpuSeconds + CPU_KILL_GRACE_SECONDS}`];
  if (!memoryDir) rlimits.push(`--data=${bytes}:${bytes}`);
  if (!pidsDir && mechanism.nprocApplies)
    rlimits.push(`--nproc=${limits.maxProcesses}:${limits.maxProcesses}`);
  const joins = [...new Set([memoryDir, pidsDir].filter((dir): dir is string => dir !== undefined))];
  return {
    wrap(file, args) {
      const inner = mechanism.prlimit
        ? [mechanism.prlimit, ...rlimits, '--', file, ...args]
        : [file, ...args];
      if (joins.length === 0) return { file: inner[0], args: inner.slice(1) };
      const procs = joins.map((dir) => path.join(dir, 'cgroup.procs'));
      return { file: '/bin/sh', args: ['-c', JOIN_SCRIPT, 'sh', ...procs, '--', ...inner] };
    },
    overLimit() {
      if (memoryDir) {
        const oom = counter(path.join(memoryDir, v2 ? 'memory.events' : 'memory.oom_control'), 'oom_kill');
        if (oom > oomBefore) return 'memory';
      }
      if (pidsDir && counter(path.join(pidsDir, 'pids.events'), 'max') > 0) return 'processes';
      return undefined;
    },
    async cleanup() {
      for (const dir of made) await removeCgroup(dir);
    },
  };
}

/** The line a tool result ends with when a call went over a limit, naming the config key. */
export function limitMessage(hit: LimitHit, limits: ResourceLimits): string {
  switch (hit) {
    case 'memory':
      return `[killed: over the sandbox memory limit (sandbox.memory_mb = ${limits.memoryMb})]`;
    case 'processes':
      return `[killed: over the sandbox process limit (sandbox.max_processes = ${limits.maxProcesses}); new processes were refused]`;
    case 'cpu':
      return `[killed: over the sandbox CPU-time limit (sandbox.cpu_seconds = ${limits.cpuSeconds})]`;
  }
}

/** The signal RLIMIT_CPU sends at the limit (before SIGKILL at the hard limit). */
export const CPU_LIMIT_SIGNAL = 'SIGXCPU';

/** Whether `prlimit` can run at all here (for tests and doctor). */
export function prlimitWorks(prlimit: string | null): boolean {
  if (!prlimit) return false;
  try {
    execFileSync(prlimit, ['--cpu=1:1', '--', 'true'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
