import { describe, expect, it } from 'vitest';
import { type BwrapPlan, buildBwrapArgs, isWithin } from '../../activities/sandbox/bwrap-args';

const base: BwrapPlan = {
  writable: true,
  network: false,
  workspace: '/home/me/proj',
  writableRoots: [],
  privateTmp: '/var/goalrun/s1/tmp',
  hide: ['/home/me', '/home/me/.goalrun'],
  protect: ['/opt/goalrun'],
  expose: [],
  maskFiles: [],
  cwd: '/home/me/proj',
  command: ['bash', '-c', 'true'],
};

/** The mount operations in order, as `flag target` (sources left out), e.g. `--tmpfs /home/me`. */
function mounts(args: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.indexOf('--'); i++) {
    const flag = args[i];
    if (flag === '--bind' || flag === '--ro-bind') {
      out.push(`${flag} ${args[i + 2]}`);
      i += 2;
    } else if (flag === '--tmpfs' || flag === '--remount-ro' || flag === '--dev' || flag === '--proc') {
      out.push(`${flag} ${args[i + 1]}`);
      i += 1;
    }
  }
  return out;
}

/** Index of a mount operation; fails the test when it is missing. */
function position(list: string[], op: string): number {
  const at = list.indexOf(op);
  expect(at, `${op} in ${list.join(', ')}`).toBeGreaterThanOrEqual(0);
  return at;
}

describe('buildBwrapArgs', () => {
  it('isolates by default: new session, no capabilities, new pid/ipc/net namespaces, read-only root', () => {
    const args = buildBwrapArgs(base);
    for (const flag of [
      '--die-with-parent',
      '--new-session',
      '--unshare-pid',
      '--unshare-ipc',
      '--unshare-net',
    ]) {
      expect(args).toContain(flag);
    }
    expect(args.slice(args.indexOf('--cap-drop'), args.indexOf('--cap-drop') + 2)).toEqual([
      '--cap-drop',
      'ALL',
    ]);
    const list = mounts(args);
    expect(list[0]).toBe('--ro-bind /');
    expect(list).toContain('--proc /proc');
    expect(list).toContain('--dev /dev');
    expect(args.slice(args.indexOf('--'))).toEqual(['--', 'bash', '-c', 'true']);
  });

  it('shares the network only when asked', () => {
    expect(buildBwrapArgs({ ...base, network: true })).not.toContain('--unshare-net');
  });

  it('binds the workspace read-write, or read-only in read-only mode', () => {
    expect(mounts(buildBwrapArgs(base))).toContain('--bind /home/me/proj');
    const readOnly = mounts(buildBwrapArgs({ ...base, writable: false, writableRoots: ['/data'] }));
    expect(readOnly).toContain('--ro-bind /home/me/proj');
    expect(readOnly).toContain('--ro-bind /data');
    expect(readOnly).not.toContain('--bind /home/me/proj');
  });

  it('mounts the private /tmp from its host directory', () => {
    const args = buildBwrapArgs(base);
    const at = args.indexOf('/var/goalrun/s1/tmp');
    expect(args.slice(at - 1, at + 2)).toEqual(['--bind', '/var/goalrun/s1/tmp', '/tmp']);
  });

  it('hides $HOME before binding a workspace inside it, and makes the hidden tmpfs read-only last', () => {
    const list = mounts(buildBwrapArgs(base));
    expect(position(list, '--tmpfs /home/me')).toBeLessThan(position(list, '--bind /home/me/proj'));
    expect(position(list, '--remount-ro /home/me')).toBeGreaterThan(position(list, '--bind /home/me/proj'));
    // Already inside the hidden, empty home: no mount of its own.
    expect(list).not.toContain('--tmpfs /home/me/.goalrun');
  });

  it('hides a hidden directory that a bind shows again', () => {
    const list = mounts(buildBwrapArgs({ ...base, workspace: '/home/me', cwd: '/home/me' }));
    expect(position(list, '--tmpfs /home/me/.goalrun')).toBeGreaterThan(position(list, '--bind /home/me'));
  });

  it('keeps goalrun read-only and its data hidden when they are inside the workspace', () => {
    const list = mounts(
      buildBwrapArgs({
        ...base,
        workspace: '/src',
        cwd: '/src',
        protect: ['/src/goalrun'],
        hide: ['/home/me', '/src/goalrun-home'],
      }),
    );
    expect(position(list, '--ro-bind /src/goalrun')).toBeGreaterThan(position(list, '--bind /src'));
    expect(position(list, '--tmpfs /src/goalrun-home')).toBeGreaterThan(position(list, '--bind /src'));
  });

  it('lets the workspace win over a hidden directory at the same path, and protection win over the workspace', () => {
    const home = mounts(buildBwrapArgs({ ...base, workspace: '/home/me', cwd: '/home/me' }));
    position(home, '--bind /home/me');
    // Neither a tmpfs under the bind nor a read-only remount of it: the workspace stays writable.
    expect(home).not.toContain('--tmpfs /home/me');
    expect(home).not.toContain('--remount-ro /home/me');
    const install = mounts(buildBwrapArgs({ ...base, workspace: '/opt/goalrun', cwd: '/opt/goalrun' }));
    expect(position(install, '--ro-bind /opt/goalrun')).toBeGreaterThan(
      position(install, '--bind /opt/goalrun'),
    );
  });

  it('shows exposed tool directories again after hiding their parent, and masks files', () => {
    const list = mounts(
      buildBwrapArgs({
        ...base,
        workspace: '/home/me',
        cwd: '/home/me',
        expose: ['/home/me/.nvm/versions/node/v20/bin'],
        maskFiles: ['/home/me/.netrc'],
      }),
    );
    expect(position(list, '--ro-bind /home/me/.nvm/versions/node/v20/bin')).toBeGreaterThan(
      position(list, '--bind /home/me'),
    );
    expect(position(list, '--ro-bind /home/me/.netrc')).toBeGreaterThan(position(list, '--bind /home/me'));
  });

  it('never hides / and skips hidden directories that the private /tmp already hides', () => {
    const list = mounts(buildBwrapArgs({ ...base, hide: ['/', '/tmp/goalrun-home', '/home/me'] }));
    expect(list).not.toContain('--tmpfs /');
    expect(list).not.toContain('--tmpfs /tmp/goalrun-home');
    const shown = mounts(
      buildBwrapArgs({ ...base, workspace: '/tmp/ws', cwd: '/tmp/ws', hide: ['/tmp/ws/.goalrun'] }),
    );
    expect(position(shown, '--tmpfs /tmp/ws/.goalrun')).toBeGreaterThan(position(shown, '--bind /tmp/ws'));
  });

  it('orders mounts parents first whatever order the plan lists them in', () => {
    const list = mounts(
      buildBwrapArgs({ ...base, writableRoots: ['/home/me/proj/out/cache', '/home/me/proj/out'] }),
    );
    expect(position(list, '--bind /home/me/proj/out')).toBeLessThan(
      position(list, '--bind /home/me/proj/out/cache'),
    );
    expect(position(list, '--bind /tmp')).toBeGreaterThan(position(list, '--ro-bind /'));
  });

  it('passes the info fd and the working directory', () => {
    const args = buildBwrapArgs({ ...base, infoFd: 3, cwd: '/home/me/proj/sub' });
    expect(args.slice(args.indexOf('--info-fd'), args.indexOf('--info-fd') + 2)).toEqual(['--info-fd', '3']);
    expect(args.slice(args.indexOf('--chdir'), args.indexOf('--chdir') + 2)).toEqual([
      '--chdir',
      '/home/me/proj/sub',
    ]);
  });

  it('rejects relative paths and an empty command', () => {
    expect(() => buildBwrapArgs({ ...base, workspace: 'proj' })).toThrow(/absolute/);
    expect(() => buildBwrapArgs({ ...base, command: [] })).toThrow(/empty/);
  });
});

describe('isWithin', () => {
  it('compares whole path segments', () => {
    expect(isWithin('/a/b', '/a')).toBe(true);
    expect(isWithin('/a', '/a')).toBe(true);
    expect(isWithin('/ab', '/a')).toBe(false);
    expect(isWithin('/anything', '/')).toBe(true);
  });
});
