import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findExecutable } from '../../activities/sandbox/host';
import { type GrepArgs, runGrep } from '../../activities/tools/grep';
import { GREP_MAX_LINE_CHARS } from '../../core/limits';
import { makeContext, makeWorkspace, removeWorkspace } from './helpers';

let workspace: string;

async function put(relative: string, content: string | Buffer): Promise<void> {
  const file = path.join(workspace, relative);
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, content);
}

beforeEach(async () => {
  workspace = await makeWorkspace();
  await put('src/a.ts', 'import x from "y";\nexport function alpha() {}\nexport function Beta() {}\n');
  await put('src/b.js', 'function gamma() {}\r\n');
  await put('docs/notes.md', 'no code here\nfunction in prose\n');
  await put('bin/tool', Buffer.from('function\0binary'));
  await put('.git/config', 'function in git\n');
  await put('node_modules/pkg/index.js', 'function inDeps() {}\n');
});
afterEach(async () => {
  await removeWorkspace(workspace);
});

const ripgrep = findExecutable('rg');

describe.each([
  ['ripgrep', ripgrep ?? undefined],
  ['the Node fallback', null],
] as const)('grep with %s', (_name, backend) => {
  const grep = (args: GrepArgs) => runGrep(args, makeContext(workspace), { ripgrep: backend });

  it('lists matching lines as path:line: text, skipping binaries, .git and node_modules', async () => {
    const outcome = await grep({ pattern: 'function\\s+\\w+' });
    expect(outcome).toEqual({
      ok: true,
      output: [
        'docs/notes.md:2: function in prose',
        'src/a.ts:2: export function alpha() {}',
        'src/a.ts:3: export function Beta() {}',
        'src/b.js:1: function gamma() {}',
      ].join('\n'),
      changedWorkspace: false,
    });
  });

  it('ignores case on request', async () => {
    expect((await grep({ pattern: 'function beta' })).output).toMatch(/^no matches/);
    expect((await grep({ pattern: 'function beta', ignore_case: true })).output).toBe(
      'src/a.ts:3: export function Beta() {}',
    );
  });

  it('filters files by glob on names, or on paths when the glob has a slash', async () => {
    expect((await grep({ pattern: 'function', glob: '*.md' })).output).toBe(
      'docs/notes.md:2: function in prose',
    );
    expect((await grep({ pattern: 'function', glob: 'src/*.js' })).output).toBe(
      'src/b.js:1: function gamma() {}',
    );
    expect((await grep({ pattern: 'function', glob: 'node_modules/**' })).output).toBe(
      'node_modules/pkg/index.js:1: function inDeps() {}',
    );
  });

  it('searches a single file or a subdirectory', async () => {
    expect((await grep({ pattern: 'prose', path: 'docs/notes.md' })).output).toBe(
      'docs/notes.md:2: function in prose',
    );
    expect((await grep({ pattern: 'function', path: 'docs' })).output).toBe(
      'docs/notes.md:2: function in prose',
    );
  });

  it('reports an invalid regular expression', async () => {
    const outcome = await grep({ pattern: 'foo(' });
    expect(outcome.ok).toBe(false);
    expect(outcome.output).toMatch(/^invalid regular expression: .*(unclosed|Unterminated) group/);
  });

  it('fails clearly for a missing path', async () => {
    const outcome = await grep({ pattern: 'x', path: 'nowhere' });
    expect(outcome.ok).toBe(false);
    expect(outcome.output).toMatch(/^file not found: nowhere/);
  });

  it('caps results and says how many more matched', async () => {
    await put('many.txt', Array.from({ length: 30 }, (_, index) => `hit ${index + 1}`).join('\n'));
    const lines = (await grep({ pattern: '^hit', max_results: 5 })).output.split('\n');
    expect(lines).toEqual([
      'many.txt:1: hit 1',
      'many.txt:2: hit 2',
      'many.txt:3: hit 3',
      'many.txt:4: hit 4',
      'many.txt:5: hit 5',
      '[25 more matching lines not shown (30 in all); narrow the pattern, path or glob, or raise max_results (at most 2000)]',
    ]);
  });

  it('clips long lines around the match', async () => {
    await put('long.txt', `${'a'.repeat(1_000)}NEEDLE${'b'.repeat(1_000)}\n`);
    const output = (await grep({ pattern: 'NEEDLE', path: 'long.txt' })).output;
    const text = output.slice('long.txt:1: '.length);
    expect(text).toContain('NEEDLE');
    expect(text.startsWith('…')).toBe(true);
    expect(text.endsWith('…')).toBe(true);
    expect(text.length).toBe(GREP_MAX_LINE_CHARS + 2);
  });

  it('supports unicode property escapes', async () => {
    await put('greek.txt', 'λόγος\nlogos\n');
    expect((await grep({ pattern: '^\\p{Script=Greek}+$', path: 'greek.txt' })).output).toBe(
      'greek.txt:1: λόγος',
    );
  });
});

describe('grep never blocks the worker', () => {
  /** The longest the event loop went without running a 10 ms timer while `work` ran. */
  async function worstEventLoopStall(work: () => Promise<unknown>): Promise<number> {
    let worst = 0;
    let last = performance.now();
    const ticker = setInterval(() => {
      const now = performance.now();
      worst = Math.max(worst, now - last);
      last = now;
    }, 10);
    try {
      await work();
    } finally {
      clearInterval(ticker);
    }
    return Math.max(worst, performance.now() - last);
  }

  it.each([
    ['ripgrep', ripgrep ?? undefined],
    ['the Node fallback', null],
  ] as const)(
    'runs (a+)+$ on a long line with %s without stalling the event loop',
    async (_name, backend) => {
      await put('evil.txt', `${'a'.repeat(50_000)}b\n`);
      let outcome: Awaited<ReturnType<typeof runGrep>> | undefined;
      const stall = await worstEventLoopStall(async () => {
        outcome = await runGrep({ pattern: '(a+)+$', path: 'evil.txt' }, makeContext(workspace), {
          ripgrep: backend,
          timeoutMs: 2_000,
        });
      });
      console.log(`grep (a+)+$ with ${_name}: worst event-loop stall ${stall.toFixed(0)} ms`);
      expect(stall).toBeLessThan(1_000);
      // ripgrep's engine is linear and finds no match; the JavaScript fallback is stopped by its timeout.
      expect(outcome?.output).toMatch(/^no matches|grep timed out after 2 s/m);
    },
  );

  it('stops the search when the activity is cancelled', async () => {
    await put('evil.txt', `${'a'.repeat(50_000)}b\n`);
    const controller = new AbortController();
    // A timeout longer than the test may run: only the cancellation can end this search (a timeout resolves).
    const running = runGrep(
      { pattern: '(a+)+$', path: 'evil.txt' },
      makeContext(workspace, { signal: controller.signal }),
      { ripgrep: null, timeoutMs: 600_000 },
    );
    setTimeout(() => controller.abort(new Error('cancelled')), 200);
    await expect(running).rejects.toThrow('cancelled');
  });
});
