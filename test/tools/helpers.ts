/**
 * Shared fixtures for the tool tests: throwaway workspaces and plain ToolContext objects.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { ToolContext } from '../../activities/tools/types';

/** A fresh, empty directory under the system temp dir (realpath'd, so `pwd` output compares equal). */
export async function makeWorkspace(): Promise<string> {
  return realpath(await mkdtemp(path.join(os.tmpdir(), 'goalrun-tools-')));
}

/** Removes a workspace made by makeWorkspace. */
export async function removeWorkspace(workspace: string): Promise<void> {
  await rm(workspace, { recursive: true, force: true });
}

/**
 * The session id of a test file's tool calls: one per test process, so that two files running at
 * once never share (or remove) each other's private sandbox /tmp.
 */
export const TEST_SESSION = `test-session-${process.pid}`;

/** A ToolContext for tests; the tools under test never touch the store. */
export function makeContext(workspace: string, overrides: Partial<ToolContext> = {}): ToolContext {
  return {
    workspace,
    sessionId: TEST_SESSION,
    toolCallId: 'test-call',
    signal: new AbortController().signal,
    heartbeat: () => {},
    store: undefined as never,
    ...overrides,
  };
}

/** True while any process of the group exists (zombies included), as the kernel sees it. */
export function groupExists(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/** True while the process exists. */
export function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/**
 * Host pids of live (non-zombie) processes whose command line contains `marker`. Works across PID
 * namespaces, where `$$` inside a sandbox means nothing outside it.
 */
export function processesWithMarker(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      if (state !== 'Z' && cmdline.includes(marker)) found.push(Number(entry));
    } catch {
      // gone while we looked
    }
  }
  return found;
}

/** A number unique enough to find a test's processes by command line (`sleep 300.<n>`). */
export function uniqueMarker(): string {
  return `300.${Math.floor(Math.random() * 1e9)}`;
}

/** Host pids of live `sleep <marker>` processes (not the shells or sandboxes whose arguments mention it). */
export function sleepersWithMarker(marker: string): number[] {
  return processesWithMarker(marker).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8') === `sleep\0${marker}\0`;
    } catch {
      return false;
    }
  });
}
