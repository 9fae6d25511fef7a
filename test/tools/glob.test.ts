import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { globTool } from '../../activities/tools/glob';
import { GLOB_MAX_RESULTS } from '../../core/limits';
import { makeContext, makeWorkspace, removeWorkspace } from './helpers';

let workspace: string;

async function touch(relative: string, content = ''): Promise<void> {
  const file = path.join(workspace, relative);
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, content);
}

beforeEach(async () => {
  workspace = await makeWorkspace();
  for (const file of [
    'README.md',
    '.env.example',
    'src/a.ts',
    'src/b.js',
    'src/sub/c.ts',
    'src/sub/deep/d.test.ts',
    '.git/config',
    '.git/hooks/pre-commit',
    '.github/workflows/ci.yml',
    'node_modules/pkg/index.js',
    'node_modules/pkg/index.ts',
  ]) {
    await touch(file);
  }
});
afterEach(async () => {
  await removeWorkspace(workspace);
});

const glob = async (pattern: string, searchPath?: string) =>
  (await globTool.run({ pattern, path: searchPath }, makeContext(workspace))).output;

describe('glob', () => {
  it('matches recursively, sorted, skipping .git and node_modules', async () => {
    expect(await glob('**/*.ts')).toBe('src/a.ts\nsrc/sub/c.ts\nsrc/sub/deep/d.test.ts');
  });

  it('matches only the top level without **', async () => {
    expect(await glob('*.md')).toBe('README.md');
  });

  it('matches dotfiles and alternatives', async () => {
    expect(await glob('*.{md,example}')).toBe('.env.example\nREADME.md');
    expect(await glob('.github/**/*.yml')).toBe('.github/workflows/ci.yml');
  });

  it('searches node_modules and .git when the pattern names them', async () => {
    expect(await glob('node_modules/**/*.js')).toBe('node_modules/pkg/index.js');
    expect(await glob('**/node_modules/**/*.ts')).toBe('node_modules/pkg/index.ts');
    expect(await glob('.git/*')).toBe('.git/config');
    expect(await glob('**/config')).toMatch(/^no files match/);
  });

  it('resolves the pattern against path and prints workspace-relative paths', async () => {
    expect(await glob('*.ts', 'src')).toBe('src/a.ts');
    expect(await glob('**/*.ts', path.join(workspace, 'src/sub'))).toBe(
      'src/sub/c.ts\nsrc/sub/deep/d.test.ts',
    );
  });

  it('accepts character classes and ?', async () => {
    expect(await glob('src/[ab].?s')).toBe('src/a.ts\nsrc/b.js');
  });

  it('says when nothing matches', async () => {
    const outcome = await globTool.run({ pattern: '**/*.py' }, makeContext(workspace));
    expect(outcome).toEqual({ ok: true, output: 'no files match **/*.py in .', changedWorkspace: false });
  });

  it('fails clearly for a missing or non-directory path', async () => {
    const missing = await globTool.run({ pattern: '*', path: 'nope' }, makeContext(workspace));
    expect(missing.ok).toBe(false);
    expect(missing.output).toMatch(/^file not found: nope/);
    const file = await globTool.run({ pattern: '*', path: 'README.md' }, makeContext(workspace));
    expect(file.ok).toBe(false);
    expect(file.output).toBe('README.md is not a directory; path must name a directory');
  });

  it(`lists at most ${GLOB_MAX_RESULTS} paths and says how many more matched`, async () => {
    const extra = 7;
    for (let index = 0; index < GLOB_MAX_RESULTS + extra; index += 1) {
      await touch(`many/f${String(index).padStart(5, '0')}.txt`);
    }
    const lines = (await glob('many/*.txt')).split('\n');
    expect(lines).toHaveLength(GLOB_MAX_RESULTS + 1);
    expect(lines[0]).toBe('many/f00000.txt');
    expect(lines.at(-1)).toBe(
      `[${extra} more matches not shown (${GLOB_MAX_RESULTS + extra} in all); narrow the pattern or path]`,
    );
  });
});
