/**
 * The file tools' workspace boundary: generated paths with `..`, absolute paths, symlink chains and
 * loops never read or write outside the workspace, and a model racing the worker by swapping
 * directories for symlinks never gets a byte written outside.
 */
import { spawn } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  watch,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileEditTool } from '../../activities/tools/file-edit';
import { fileReadTool } from '../../activities/tools/file-read';
import { fileWriteTool } from '../../activities/tools/file-write';
import { globTool } from '../../activities/tools/glob';
import { grepTool } from '../../activities/tools/grep';
import { DEFAULT_SANDBOX } from '../../core/sandbox-settings';
import { makeContext } from './helpers';

const MARKER = 'OUTSIDE-SECRET-7f3a';
const root = realpathSync(mkdtempSync('/var/tmp/goalrun-boundary-'));
const workspace = path.join(root, 'ws');
const outside = path.join(root, 'outside');
const extra = path.join(root, 'extra');

/** Every file and symlink under a directory (not following symlinks), relative, sorted. */
function listTree(dir: string, prefix = ''): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const full = path.join(dir, name);
    const rel = prefix === '' ? name : `${prefix}/${name}`;
    const stat = lstatSync(full);
    if (stat.isDirectory()) out.push(`${rel}/`, ...listTree(full, rel));
    else out.push(`${rel}${stat.isSymbolicLink() ? ' -> link' : ''}`);
  }
  return out;
}

function snapshotOutside(): string[] {
  return [...listTree(outside), readFileSync(path.join(outside, 'secret.txt'), 'utf8')];
}

beforeAll(() => {
  mkdirSync(path.join(workspace, 'a', 'b'), { recursive: true });
  mkdirSync(path.join(outside, 'sub'), { recursive: true });
  mkdirSync(extra);
  writeFileSync(path.join(outside, 'secret.txt'), `${MARKER}\n`);
  writeFileSync(path.join(workspace, 'a', 'inside.txt'), 'inside\n');
  // Symlinks of every kind: out of the workspace, into it, chains, loops, absolute, dangling.
  symlinkSync(outside, path.join(workspace, 'out'));
  symlinkSync('a', path.join(workspace, 'in'));
  symlinkSync(path.join(workspace, 'a', 'b'), path.join(workspace, 'abs-in'));
  symlinkSync('chain2', path.join(workspace, 'chain1'));
  symlinkSync('out', path.join(workspace, 'chain2'));
  symlinkSync('loop2', path.join(workspace, 'loop1'));
  symlinkSync('loop1', path.join(workspace, 'loop2'));
  symlinkSync(path.join(outside, 'secret.txt'), path.join(workspace, 'secret-link'));
  symlinkSync(path.join(outside, 'new-target.txt'), path.join(workspace, 'dangling-out'));
  symlinkSync('a/dangling-in.txt', path.join(workspace, 'dangling-in'));
  symlinkSync('../..', path.join(workspace, 'a', 'b', 'up2'));
  symlinkSync('../../..', path.join(workspace, 'a', 'b', 'up3'));
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

const context = (writableRoots: string[] = []) =>
  makeContext(workspace, { sandbox: { ...DEFAULT_SANDBOX, writableRoots } });

/** Path segments a hostile model would use. */
const segment = fc.constantFrom(
  '..',
  '.',
  'a',
  'b',
  'in',
  'out',
  'abs-in',
  'chain1',
  'loop1',
  'secret-link',
  'dangling-out',
  'dangling-in',
  'up2',
  'up3',
  'sub',
  'new',
  'x.txt',
  'secret.txt',
);
const prefix = fc.constantFrom('', `${workspace}/`, `${outside}/`, `${root}/`, '/', '/etc/');
const hostilePath = fc
  .tuple(prefix, fc.array(segment, { minLength: 1, maxLength: 6 }))
  .map(([start, parts]) => `${start}${parts.join('/')}`);

describe('the workspace boundary, over generated paths', () => {
  it('file-write never creates or changes anything outside the workspace', async () => {
    const before = snapshotOutside();
    const rootBefore = readdirSync(root).sort();
    await fc.assert(
      fc.asyncProperty(hostilePath, async (toolPath) => {
        const outcome = await fileWriteTool.run({ path: toolPath, content: 'written' }, context());
        if (outcome.ok) {
          // A successful write landed inside: find it by the path it reports.
          const shown = outcome.output.replace(/^wrote 7 bytes to /, '');
          const written = realpathSync(path.resolve(workspace, shown));
          expect(written.startsWith(`${workspace}/`)).toBe(true);
        } else {
          expect(outcome.output).not.toContain(MARKER);
        }
        expect(snapshotOutside()).toEqual(before);
        expect(readdirSync(root).sort()).toEqual(rootBefore);
        expect(existsSync('/etc/x.txt') || existsSync('/x.txt') || existsSync('/new')).toBe(false);
      }),
      { numRuns: 300 },
    );
  });

  it('names the rule when it refuses a path outside', async () => {
    for (const toolPath of [
      '../x.txt',
      `${outside}/x.txt`,
      'out/x.txt',
      'chain1/x.txt',
      'dangling-out',
      'a/b/up3/x.txt',
    ]) {
      const outcome = await fileWriteTool.run({ path: toolPath, content: 'x' }, context());
      expect(outcome.ok, toolPath).toBe(false);
      expect(outcome.output, toolPath).toMatch(/^outside the workspace: /);
      expect(outcome.output, toolPath).toContain(`file tools only work inside the workspace (${workspace})`);
    }
    const loop = await fileWriteTool.run({ path: 'loop1/x.txt', content: 'x' }, context());
    expect(loop.output).toMatch(/too many levels of symbolic links/);
  });

  it('writes through symlinks that stay inside, and creates missing parents', async () => {
    // Links of its own: the generated paths above may have written files where the shared ones point.
    mkdirSync(path.join(workspace, 'kept', 'deeper'), { recursive: true });
    symlinkSync('kept', path.join(workspace, 'kept-in'));
    symlinkSync('kept/dangling.txt', path.join(workspace, 'kept-dangling'));
    symlinkSync(path.join(workspace, 'kept', 'deeper'), path.join(workspace, 'kept-abs'));
    expect((await fileWriteTool.run({ path: 'kept-in/via-link.txt', content: 'v' }, context())).ok).toBe(
      true,
    );
    expect(readFileSync(path.join(workspace, 'kept', 'via-link.txt'), 'utf8')).toBe('v');
    expect((await fileWriteTool.run({ path: 'kept-dangling', content: 'd' }, context())).ok).toBe(true);
    expect(readFileSync(path.join(workspace, 'kept', 'dangling.txt'), 'utf8')).toBe('d');
    expect((await fileWriteTool.run({ path: 'kept-abs/new/deep/f.txt', content: 'n' }, context())).ok).toBe(
      true,
    );
    expect(readFileSync(path.join(workspace, 'kept', 'deeper', 'new', 'deep', 'f.txt'), 'utf8')).toBe('n');
  });

  it('file-read, glob and grep never show what is outside', async () => {
    await fc.assert(
      fc.asyncProperty(hostilePath, async (toolPath) => {
        const read = await fileReadTool.run({ path: toolPath }, context());
        expect(read.output).not.toContain(MARKER);
        const globbed = await globTool.run({ pattern: '**', path: toolPath }, context());
        // Paths inside the workspace are shown relative; anything absolute would be outside.
        for (const line of globbed.output.split('\n')) {
          if (
            !line.startsWith('[') &&
            !line.startsWith('no files') &&
            !line.startsWith('outside the workspace')
          ) {
            expect(path.isAbsolute(line), line).toBe(false);
          }
        }
        const grepped = await grepTool.run({ pattern: 'OUTSIDE', path: toolPath }, context());
        expect(grepped.output).not.toContain(MARKER);
      }),
      { numRuns: 150 },
    );
    const absolute = await globTool.run({ pattern: `${outside}/**` }, context());
    expect(absolute.output).toMatch(/^outside the workspace: /);
    const fromRoot = await grepTool.run({ pattern: 'OUTSIDE' }, context());
    expect(fromRoot.output).toMatch(/^no matches/);
  });

  it('file-edit follows the same rule', async () => {
    const outcome = await fileEditTool.run(
      { path: 'secret-link', old_string: MARKER, new_string: 'pwned' },
      context(),
    );
    expect(outcome.output).toMatch(/^outside the workspace: secret-link \(it resolves to .*secret\.txt\)/);
    expect(readFileSync(path.join(outside, 'secret.txt'), 'utf8')).toBe(`${MARKER}\n`);
  });

  it('allows the writable roots, and nothing in a read-only sandbox', async () => {
    const target = path.join(extra, 'allowed.txt');
    expect((await fileWriteTool.run({ path: target, content: 'ok' }, context([extra]))).ok).toBe(true);
    expect(readFileSync(target, 'utf8')).toBe('ok');
    const readOnly = makeContext(workspace, { sandbox: { ...DEFAULT_SANDBOX, mode: 'read-only' } });
    const refused = await fileWriteTool.run({ path: 'ro.txt', content: 'x' }, readOnly);
    expect(refused.output).toBe(
      'read-only sandbox: file-write cannot change files (the goal runs with sandbox mode read-only)',
    );
    expect(existsSync(path.join(workspace, 'ro.txt'))).toBe(false);
    expect((await fileReadTool.run({ path: 'a/inside.txt' }, readOnly)).output).toBe('     1\tinside');
  });

  it('refuses hard-linked files and FIFOs', async () => {
    writeFileSync(path.join(workspace, 'hard.txt'), 'h');
    const { linkSync } = await import('node:fs');
    linkSync(path.join(workspace, 'hard.txt'), path.join(workspace, 'hard2.txt'));
    const outcome = await fileWriteTool.run({ path: 'hard.txt', content: 'x' }, context());
    expect(outcome.output).toMatch(/has 2 hard links/);
    expect(readFileSync(path.join(workspace, 'hard.txt'), 'utf8')).toBe('h');
    const fifo = path.join(workspace, 'pipe');
    await new Promise((resolve) => spawn('mkfifo', [fifo]).on('close', resolve));
    expect((await fileWriteTool.run({ path: 'pipe', content: 'x' }, context())).output).toMatch(
      /not a regular file/,
    );
    expect((await fileReadTool.run({ path: 'pipe' }, context())).output).toMatch(/not a regular file/);
  });
});

/**
 * Swaps `race` between a real directory and a symlink to the outside as fast as it can, in a process
 * of its own (so the swaps run while the worker's calls wait on I/O). Node has no renameat2, so a
 * swap is two renames, and `race` is briefly missing between them. A file-write that comes then
 * makes `race` again as a parent it needs (inside the workspace, which is allowed): the flipper
 * moves that directory aside and goes on.
 */
const FLIPPER = `
const fs = require('node:fs');
process.chdir(process.argv[1]);
let strays = 0;
function put(from, to) {
  for (;;) {
    try {
      fs.renameSync(from, to);
      return;
    } catch (error) {
      if (!['EISDIR', 'ENOTEMPTY', 'EEXIST', 'ENOTDIR'].includes(error.code)) throw error;
      fs.renameSync(to, 'stray-' + strays++);
    }
  }
}
for (;;) {
  fs.renameSync('race', 'race-dir');
  put('race-link', 'race');
  fs.renameSync('race', 'race-link');
  put('race-dir', 'race');
}
`;

/** Records every entry made, changed or removed in some directories (inotify, through fs.watch). */
function watchDirectories(dirs: string[]) {
  const events: string[] = [];
  const watchers = dirs.map((dir) =>
    watch(dir, (eventType, name) => events.push(`${eventType} ${path.join(dir, String(name))}`)),
  );
  return {
    events,
    close: () => {
      for (const watcher of watchers) watcher.close();
    },
  };
}

/** Waits until `check` holds (polling every few milliseconds), failing after `ms`. */
async function until(what: string, check: () => boolean, ms = 10_000): Promise<void> {
  for (const deadline = Date.now() + ms; !check(); await delay(2)) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
  }
}

describe('racing the worker with symlink swaps', () => {
  it('never makes a file or directory outside, not even for a moment, while another process swaps a parent directory for a symlink', async () => {
    mkdirSync(path.join(workspace, 'race', 'q'), { recursive: true });
    symlinkSync(outside, path.join(workspace, 'race-link'));
    mkdirSync(path.join(outside, 'q'), { recursive: true });
    writeFileSync(path.join(outside, 'q', 'existing.txt'), 'keep');
    writeFileSync(path.join(workspace, 'race', 'q', 'existing.txt'), 'inside');
    const watched = watchDirectories([outside, path.join(outside, 'q')]);
    // The watcher works: a file made and removed at once outside is seen.
    const probe = path.join(outside, 'q', 'watch-probe.txt');
    writeFileSync(probe, 'probe');
    rmSync(probe);
    await until('the watcher to see the probe', () => watched.events.some((event) => event.endsWith(probe)));
    watched.events.length = 0;

    const flipper = spawn(process.execPath, ['-e', FLIPPER, workspace], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let flipperError = '';
    flipper.stderr.on('data', (chunk) => {
      flipperError += chunk;
    });
    // Listened for at once: a flipper that dies early must fail the test, not hang it.
    const flipperClosed = new Promise<number | null>((resolve) => flipper.once('close', resolve));
    let written = 0;
    let refused = 0;
    try {
      // Start writing only once the flipper really flips.
      const seen = new Set<string>();
      await until('the flipper to swap', () => {
        try {
          seen.add(lstatSync(path.join(workspace, 'race')).isSymbolicLink() ? 'link' : 'dir');
        } catch {
          // between the two renames of a swap
        }
        return seen.size === 2;
      });
      for (let i = 0; i < 600; i++) {
        // A new file, an existing one, and a file in a directory that must be made first.
        const target = ['race/q/new.txt', 'race/q/existing.txt', `race/q/d${i}/deep.txt`][i % 3];
        const outcome = await fileWriteTool.run({ path: target, content: `round ${i}` }, context());
        if (outcome.ok) written++;
        else refused++;
      }
    } finally {
      flipper.kill('SIGKILL');
      await flipperClosed;
    }
    // Events still queued reach the watcher's callback within a few event-loop turns.
    await delay(200);
    watched.close();
    console.log(`symlink race: ${written} writes inside, ${refused} refused`);
    expect(flipperError).toBe('');
    expect(watched.events).toEqual([]);
    expect(readFileSync(path.join(outside, 'q', 'existing.txt'), 'utf8')).toBe('keep');
    expect(listTree(outside)).toEqual(['q/', 'q/existing.txt', 'secret.txt', 'sub/']);
    // Both outcomes happened: the race was really run.
    expect(written).toBeGreaterThan(0);
    expect(refused).toBeGreaterThan(0);
  });
});
