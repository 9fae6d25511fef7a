import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fileWriteTool } from '../../activities/tools/file-write';
import { makeContext, makeWorkspace, removeWorkspace } from './helpers';

let workspace: string;
beforeEach(async () => {
  workspace = await makeWorkspace();
});
afterEach(async () => {
  await removeWorkspace(workspace);
});

const read = (relative: string) => readFile(path.join(workspace, relative), 'utf8');

describe('file-write', () => {
  it('creates parent directories and reports bytes written', async () => {
    const outcome = await fileWriteTool.run(
      { path: 'a/b/c.txt', content: 'héllo\n' },
      makeContext(workspace),
    );
    expect(outcome).toEqual({ ok: true, output: 'wrote 7 bytes to a/b/c.txt', changedWorkspace: true });
    expect(await read('a/b/c.txt')).toBe('héllo\n');
  });

  it('overwrites an existing file', async () => {
    await writeFile(path.join(workspace, 'f.txt'), 'old content');
    await fileWriteTool.run({ path: 'f.txt', content: 'new' }, makeContext(workspace));
    expect(await read('f.txt')).toBe('new');
  });

  it('fails clearly when the path is a directory', async () => {
    await mkdir(path.join(workspace, 'dir'));
    const outcome = await fileWriteTool.run({ path: 'dir', content: 'x' }, makeContext(workspace));
    expect(outcome.ok).toBe(false);
    expect(outcome.changedWorkspace).toBe(false);
    expect(outcome.output).toMatch(/^dir is a directory, not a file/);
  });
});
