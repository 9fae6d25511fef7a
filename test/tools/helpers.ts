/**
 * Shared fixtures for the tool tests: throwaway workspaces and plain ToolContext objects.
 */
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

/** A ToolContext for tests; the tools under test never touch the store. */
export function makeContext(workspace: string, overrides: Partial<ToolContext> = {}): ToolContext {
  return {
    workspace,
    sessionId: 'test-session',
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
