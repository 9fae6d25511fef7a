import { mkdir, truncate, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fileReadTool, numberLines } from '../../activities/tools/file-read';
import { FILE_READ_DEFAULT_LIMIT, FILE_READ_MAX_LINE_CHARS } from '../../core/limits';
import { makeContext, makeWorkspace, removeWorkspace } from './helpers';

let workspace: string;
beforeEach(async () => {
  workspace = await makeWorkspace();
});
afterEach(async () => {
  await removeWorkspace(workspace);
});

const lines = (count: number) => Array.from({ length: count }, (_, index) => `line ${index + 1}`);
const read = (args: Parameters<typeof fileReadTool.run>[0]) => fileReadTool.run(args, makeContext(workspace));

describe('file-read', () => {
  it('numbers every line like cat -n', async () => {
    await writeFile(path.join(workspace, 'a.txt'), 'alpha\nbeta\n');
    const outcome = await read({ path: 'a.txt' });
    expect(outcome).toEqual({ ok: true, output: '     1\talpha\n     2\tbeta', changedWorkspace: false });
  });

  it('reads a window and says where to continue', async () => {
    await writeFile(path.join(workspace, 'a.txt'), `${lines(10).join('\n')}\n`);
    const outcome = await read({ path: 'a.txt', offset: 3, limit: 4 });
    expect(outcome.output).toBe(
      '     3\tline 3\n     4\tline 4\n     5\tline 5\n     6\tline 6\n[lines 3-6 of 10; use offset=7 to read more]',
    );
  });

  it('adds no note when the window reaches the end', async () => {
    await writeFile(path.join(workspace, 'a.txt'), lines(10).join('\n'));
    const outcome = await read({ path: 'a.txt', offset: 9 });
    expect(outcome.output).toBe('     9\tline 9\n    10\tline 10');
  });

  it(`returns ${FILE_READ_DEFAULT_LIMIT} lines by default`, async () => {
    await writeFile(path.join(workspace, 'big.txt'), `${lines(5_000).join('\n')}\n`);
    const outcome = await read({ path: 'big.txt' });
    const outputLines = outcome.output.split('\n');
    expect(outputLines).toHaveLength(FILE_READ_DEFAULT_LIMIT + 1);
    expect(outputLines[FILE_READ_DEFAULT_LIMIT - 1]).toBe('  2000\tline 2000');
    expect(outputLines.at(-1)).toBe('[lines 1-2000 of 5000; use offset=2001 to read more]');
  });

  it('fails when the offset is past the end', async () => {
    await writeFile(path.join(workspace, 'a.txt'), 'one\ntwo\n');
    const outcome = await read({ path: 'a.txt', offset: 5 });
    expect(outcome).toEqual({
      ok: false,
      output: 'offset 5 is past the end of a.txt, which has 2 lines',
      changedWorkspace: false,
    });
  });

  it('says when a file is empty', async () => {
    await writeFile(path.join(workspace, 'empty.txt'), '');
    expect((await read({ path: 'empty.txt' })).output).toBe('[empty.txt is empty]');
  });

  it('strips CR of CRLF line ends and clips very long lines', async () => {
    await writeFile(
      path.join(workspace, 'crlf.txt'),
      `a\r\n${'x'.repeat(FILE_READ_MAX_LINE_CHARS + 500)}\r\n`,
    );
    const [first, second] = (await read({ path: 'crlf.txt' })).output.split('\n');
    expect(first).toBe('     1\ta');
    expect(second).toBe(
      `     2\t${'x'.repeat(FILE_READ_MAX_LINE_CHARS)}… [line clipped at ${FILE_READ_MAX_LINE_CHARS} characters]`,
    );
  });

  it('refuses binary files', async () => {
    await writeFile(path.join(workspace, 'blob.bin'), Buffer.from([0x41, 0x00, 0x42]));
    const outcome = await read({ path: 'blob.bin' });
    expect(outcome.ok).toBe(false);
    expect(outcome.output).toBe(
      'blob.bin is a binary file (it contains NUL bytes); file-read only shows text files',
    );
  });

  it('explains missing files and directories', async () => {
    const missing = await read({ path: 'nope/missing.txt' });
    expect(missing.ok).toBe(false);
    expect(missing.output).toMatch(/^file not found: nope\/missing\.txt/);
    await mkdir(path.join(workspace, 'dir'));
    const directory = await read({ path: 'dir' });
    expect(directory.ok).toBe(false);
    expect(directory.output).toMatch(/^dir is a directory, not a file/);
  });

  it('accepts absolute paths', async () => {
    const file = path.join(workspace, 'sub', 'abs.txt');
    await mkdir(path.dirname(file));
    await writeFile(file, 'hello');
    expect((await read({ path: file })).output).toBe('     1\thello');
  });
});

describe('file-read on huge files', () => {
  it('returns lines 1-50 of a 2 GB sparse file without reading it all', async () => {
    const file = path.join(workspace, 'huge.log');
    await writeFile(file, `${lines(100_000).join('\n')}\n`);
    await truncate(file, 2 * 1024 ** 3);
    const started = performance.now();
    const outcome = await read({ path: 'huge.log', limit: 50 });
    console.log(`file-read lines 1-50 of a 2 GB sparse file: ${(performance.now() - started).toFixed(0)} ms`);
    const shown = outcome.output.split('\n');
    expect(shown.slice(0, 50)).toEqual(lines(50).map((line, index) => numberLines([line], index + 1)));
    expect(shown[50]).toMatch(/^\[lines 1-50 of more than \d+; use offset=51 to read more\]$/);
    expect(shown).toHaveLength(51);
  });

  it('counts the total when the end is near, and stops counting when it is far', async () => {
    await writeFile(path.join(workspace, 'near.txt'), `${lines(1_000).join('\n')}\n`);
    const near = await read({ path: 'near.txt', offset: 990, limit: 5 });
    expect(near.output.split('\n').at(-1)).toBe('[lines 990-994 of 1000; use offset=995 to read more]');
    // About 6 MB of lines: more than file-read counts past its window.
    await writeFile(path.join(workspace, 'far.txt'), `${lines(500_000).join('\n')}\n`);
    const far = await read({ path: 'far.txt', limit: 5 });
    const note = far.output.split('\n').at(-1) ?? '';
    const counted = Number(/of more than (\d+);/.exec(note)?.[1]);
    expect(note).toMatch(/^\[lines 1-5 of more than \d+; use offset=6 to read more\]$/);
    expect(counted).toBeGreaterThan(5);
    expect(counted).toBeLessThan(500_000);
  });

  it('stops when cancelled while skipping to a far offset', async () => {
    const file = path.join(workspace, 'far.txt');
    const many = `${'x'.repeat(99)}\n`.repeat(200_000);
    await writeFile(file, many.repeat(5));
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('cancelled')), 50);
    const reading = fileReadTool.run(
      { path: 'far.txt', offset: 999_999 },
      makeContext(workspace, { signal: controller.signal }),
    );
    await expect(reading).rejects.toThrow('cancelled');
  });
});
