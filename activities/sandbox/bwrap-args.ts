/**
 * The bubblewrap command line for one sandboxed process. Pure: every path it needs is in the plan,
 * so the policy (what is hidden, what is writable, in which order the mounts stack) is tested
 * without starting anything.
 */
import path from 'node:path';

/** Where a sandboxed process sees the goal's private temporary directory. */
export const SANDBOX_TMP = '/tmp';

/** Everything that decides one sandbox. Paths are absolute and already resolved (no symlinks). */
export interface BwrapPlan {
  /** `workspace-write` binds the workspace read-write; `read-only` binds it read-only. */
  writable: boolean;
  /** Share the host's network namespace (otherwise only a private loopback exists). */
  network: boolean;
  workspace: string;
  /** Extra directories bound read-write (read-only when `writable` is false). */
  writableRoots: readonly string[];
  /** Host directory mounted at /tmp: private to the goal, shared by its commands and jobs. */
  privateTmp: string;
  /** Directories replaced by an empty read-only tmpfs: $HOME, $GOALRUN_HOME. */
  hide: readonly string[];
  /** Directories mounted read-only over themselves, even inside a writable bind (goalrun's install dir). */
  protect: readonly string[];
  /** Directories under a hidden one that are shown again read-only (tool binaries on PATH). */
  expose: readonly string[];
  /** Files replaced by an empty read-only file when they would otherwise be visible (~/.netrc). */
  maskFiles: readonly string[];
  /** Working directory of the command inside the sandbox. */
  cwd: string;
  /** File descriptor on which bwrap reports the sandbox's pid (`--info-fd`). */
  infoFd?: number;
  /** The command and its arguments, run inside the sandbox. */
  command: readonly string[];
}

/** Kinds of mounts, in the order they stack when two share a path (later ones win). */
const MOUNT_RANK = { hide: 0, expose: 1, bind: 2, protect: 3, mask: 4 } as const;

interface Mount {
  target: string;
  kind: keyof typeof MOUNT_RANK;
  args: string[];
}

/** Number of path segments: `/` is 0, `/a/b` is 2. */
function depth(target: string): number {
  return target === '/' ? 0 : target.split('/').length - 1;
}

/** True when `child` is `parent` or below it. */
export function isWithin(child: string, parent: string): boolean {
  if (parent === '/') return true;
  return child === parent || child.startsWith(`${parent}/`);
}

/**
 * The mounts of a plan, parents before children so that a bind inside a hidden directory (a
 * workspace under $HOME) and a hidden or protected directory inside a bind (goalrun's install dir
 * inside the workspace) both end up as the plan says.
 */
function mountsOf(plan: BwrapPlan): Mount[] {
  const bindFlag = plan.writable ? '--bind' : '--ro-bind';
  const binds = [plan.workspace, ...plan.writableRoots];
  const mounts: Mount[] = [
    { target: SANDBOX_TMP, kind: 'bind', args: ['--bind', plan.privateTmp, SANDBOX_TMP] },
  ];
  for (const dir of binds) mounts.push({ target: dir, kind: 'bind', args: [bindFlag, dir, dir] });
  for (const dir of plan.expose) mounts.push({ target: dir, kind: 'expose', args: ['--ro-bind', dir, dir] });
  for (const dir of plan.protect)
    mounts.push({ target: dir, kind: 'protect', args: ['--ro-bind', dir, dir] });
  for (const file of plan.maskFiles) {
    mounts.push({ target: file, kind: 'mask', args: ['--ro-bind', '/dev/null', file] });
  }
  for (const dir of hiddenDirs(plan)) mounts.push({ target: dir, kind: 'hide', args: ['--tmpfs', dir] });
  return mounts
    .map((mount, index) => ({ mount, index }))
    .sort(
      (a, b) =>
        depth(a.mount.target) - depth(b.mount.target) ||
        MOUNT_RANK[a.mount.kind] - MOUNT_RANK[b.mount.kind] ||
        a.index - b.index,
    )
    .map(({ mount }) => mount);
}

/**
 * The hidden directories that need a mount. `/` is never hidden (it would hide the system); a
 * directory under /tmp is already invisible behind the private /tmp, and one inside another hidden
 * directory inside the empty tmpfs, unless a bind shows it again. A directory that is itself bound
 * (the workspace is $HOME) is not hidden: the bind covers the tmpfs, and the tmpfs's read-only
 * remount would then turn the workspace read-only.
 */
function hiddenDirs(plan: BwrapPlan): string[] {
  const shown = [plan.workspace, ...plan.writableRoots, ...plan.expose];
  const bound = new Set([plan.workspace, ...plan.writableRoots]);
  const hide = [...new Set(plan.hide)].filter((dir) => dir !== '/' && !bound.has(dir));
  /** True when a bind between `outer` and `dir` makes `dir` visible again. */
  const reshown = (dir: string, outer: string) =>
    shown.some((bound) => (isWithin(dir, bound) || isWithin(bound, dir)) && isWithin(bound, outer));
  return hide.filter((dir) => {
    if (isWithin(dir, SANDBOX_TMP) && !reshown(dir, SANDBOX_TMP)) return false;
    return !hide.some((outer) => outer !== dir && isWithin(dir, outer) && !reshown(dir, outer));
  });
}

/** The bwrap arguments (without the `bwrap` itself) for a plan. */
export function buildBwrapArgs(plan: BwrapPlan): string[] {
  for (const [name, value] of [
    ['workspace', plan.workspace],
    ['privateTmp', plan.privateTmp],
    ['cwd', plan.cwd],
  ] as const) {
    if (!path.isAbsolute(value)) throw new Error(`sandbox ${name} must be an absolute path, got ${value}`);
  }
  if (plan.command.length === 0) throw new Error('sandbox command is empty');
  const args = [
    // The sandbox dies with the worker; its processes cannot reach the worker's terminal.
    '--die-with-parent',
    '--new-session',
    // A worker running as root would otherwise keep every capability inside (and could remount /).
    '--cap-drop',
    'ALL',
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-cgroup-try',
  ];
  if (!plan.network) args.push('--unshare-net');
  args.push('--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc');
  for (const mount of mountsOf(plan)) args.push(...mount.args);
  // Read-only only after every bind inside them exists: bwrap creates mount points in the tmpfs.
  for (const dir of hiddenDirs(plan)) args.push('--remount-ro', dir);
  args.push('--chdir', plan.cwd);
  if (plan.infoFd !== undefined) args.push('--info-fd', String(plan.infoFd));
  args.push('--', ...plan.command);
  return args;
}
