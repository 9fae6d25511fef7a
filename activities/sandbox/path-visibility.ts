/**
 * Whether a program the sandbox is asked to start can see a path of the host (issue 26 §4): the
 * sandbox's /tmp is its own, and the home directories and GOALRUN_HOME are hidden. A server
 * installed there fails with "Cannot find module"; this says why, in words a user can act on.
 */
import { realpathSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { SandboxSettings } from '../../core/sandbox-settings';
import { isWithin } from './bwrap-args';
import type { SandboxHost } from './host';
import { cachedExposedPathDirs } from './path-exposure';

/** Where the sandbox starts a program: its workspace and settings, on this host. */
export interface SandboxView {
  workspace: string;
  sandbox: SandboxSettings;
  host: SandboxHost;
}

function real(file: string): string {
  try {
    return realpathSync(file);
  } catch {
    return path.resolve(file);
  }
}

/** Why the sandbox cannot see `file` (an absolute path), or null when it can (or runs no sandbox). */
export function unseenBySandbox(file: string, view: SandboxView): string | null {
  if (view.sandbox.mode === 'off' || !path.isAbsolute(file)) return null;
  const target = real(file);
  const binds = [view.workspace, ...view.sandbox.writableRoots].map(real);
  if (binds.some((bind) => isWithin(target, bind))) return null;
  for (const tmp of new Set(['/tmp', real(os.tmpdir())])) {
    if (isWithin(target, tmp)) {
      return `${file} is under ${tmp}, which the sandbox replaces with a private, empty one: install it in the workspace or a directory of sandbox.writable_roots`;
    }
  }
  const hidden = [...view.host.homes, view.host.goalrunHome].map(real);
  const exposed = cachedExposedPathDirs(view.host.hostEnv.PATH, hidden, binds);
  const home = hidden.find((dir) => dir !== '/' && isWithin(target, dir));
  if (home && !exposed.some((dir) => isWithin(target, dir))) {
    return `${file} is in ${home}, which the sandbox hides: install it outside the home directory, or list its directory in sandbox.writable_roots`;
  }
  return null;
}

/** The first path among a program and its arguments that the sandbox cannot see, and why; or null. */
export function firstUnseenPath(argv: readonly string[], view: SandboxView): string | null {
  for (const arg of argv) {
    const why = unseenBySandbox(arg, view);
    if (why) return why;
  }
  return null;
}
