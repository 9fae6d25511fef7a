import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { countOccurrences, fileEditTool } from '../../activities/tools/file-edit';
import { makeContext, makeWorkspace, removeWorkspace } from './helpers';

let workspace: string;
beforeEach(async () => {
  workspace = await makeWorkspace();
});
afterEach(async () => {
  await removeWorkspace(workspace);
});

const read = (relative: string) => readFile(path.join(workspace, relative), 'utf8');

describe('file-edit', () => {
  const edit = (args: Parameters<typeof fileEditTool.run>[0]) =>
    fileEditTool.run(args, makeContext(workspace));

  beforeEach(async () => {
    await writeFile(path.join(workspace, 'code.ts'), 'const a = 1;\nconst b = 1;\nconst c = 2;\n');
  });

  it('replaces a unique occurrence', async () => {
    const outcome = await edit({ path: 'code.ts', old_string: 'const c = 2;', new_string: 'const c = 3;' });
    expect(outcome).toEqual({ ok: true, output: 'replaced 1 occurrence in code.ts', changedWorkspace: true });
    expect(await read('code.ts')).toBe('const a = 1;\nconst b = 1;\nconst c = 3;\n');
  });

  it('replaces every occurrence with replace_all', async () => {
    const outcome = await edit({ path: 'code.ts', old_string: '= 1', new_string: '= 10', replace_all: true });
    expect(outcome.output).toBe('replaced 2 occurrences in code.ts');
    expect(await read('code.ts')).toBe('const a = 10;\nconst b = 10;\nconst c = 2;\n');
  });

  it('keeps $ patterns in new_string literal', async () => {
    await edit({ path: 'code.ts', old_string: 'const c = 2;', new_string: "const c = '$&$1$$';" });
    expect(await read('code.ts')).toContain("const c = '$&$1$$';");
  });

  it('refuses an ambiguous old_string and says how many times it occurs', async () => {
    const outcome = await edit({ path: 'code.ts', old_string: '= 1', new_string: '= 5' });
    expect(outcome).toEqual({
      ok: false,
      output:
        'old_string occurs 2 times in code.ts; include more surrounding text to make it unique, ' +
        'or set replace_all to true to replace every occurrence',
      changedWorkspace: false,
    });
  });

  it('refuses an old_string that is not in the file', async () => {
    const outcome = await edit({ path: 'code.ts', old_string: 'const d', new_string: 'const e' });
    expect(outcome.ok).toBe(false);
    expect(outcome.changedWorkspace).toBe(false);
    expect(outcome.output).toBe(
      'old_string not found in code.ts; it must match the file exactly, including whitespace and indentation ' +
        '(read the file again with file-read, and leave out the line-number prefixes)',
    );
  });

  it('refuses an empty old_string', async () => {
    const outcome = await edit({ path: 'code.ts', old_string: '', new_string: 'x' });
    expect(outcome.ok).toBe(false);
    expect(outcome.output).toBe(
      'old_string is empty; give the exact text to replace (to create or overwrite a file, use file-write)',
    );
  });

  it('refuses identical old_string and new_string', async () => {
    const outcome = await edit({ path: 'code.ts', old_string: 'const a', new_string: 'const a' });
    expect(outcome.ok).toBe(false);
    expect(outcome.output).toBe('old_string and new_string are identical; nothing would change');
  });

  it('explains a missing file', async () => {
    const outcome = await edit({ path: 'missing.ts', old_string: 'a', new_string: 'b' });
    expect(outcome.ok).toBe(false);
    expect(outcome.output).toMatch(/^file not found: missing\.ts/);
  });

  it('leaves the file untouched on every error', async () => {
    const before = await read('code.ts');
    await edit({ path: 'code.ts', old_string: '= 1', new_string: '= 5' });
    await edit({ path: 'code.ts', old_string: 'nope', new_string: 'x' });
    expect(await read('code.ts')).toBe(before);
  });

  it('counts non-overlapping occurrences', () => {
    expect(countOccurrences('aaaa', 'aa')).toBe(2);
    expect(countOccurrences('abc', 'd')).toBe(0);
    expect(countOccurrences('abc', '')).toBe(0);
  });
});
