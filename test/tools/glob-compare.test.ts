/**
 * The glob tool on tinyglobby (issue 31) against the matcher it replaced (scripts/bench/legacy-glob.js,
 * the code of before, kept as the baseline): on a tree with symlinks (to a directory inside, to a file,
 * outside the workspace, to itself, dangling), dotfiles, emoji and CJK names and heavy folders, every
 * pattern lists what it listed before, but for the intended differences named here.
 */
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { globTool } from '../../activities/tools/glob';
import { DEFAULT_SKIPPED_DIRS, globNamesDir } from '../../activities/tools/glob-pattern';
import { makeContext, makeWorkspace, removeWorkspace } from './helpers';

// The baseline is the plain JavaScript that the benchmark runs too.
const { legacyGlob, globToRegExp } = require('../../scripts/bench/legacy-glob.js') as {
  legacyGlob: (root: string, pattern: string) => Promise<string[]>;
  globToRegExp: (pattern: string) => RegExp;
};

/** Intended difference 1: folders skipped now that the old matcher walked (it skipped only these two). */
const SKIPPED_BEFORE = new Set(['.git', 'node_modules']);
const SKIPPED_NOW = DEFAULT_SKIPPED_DIRS.filter((dir) => !SKIPPED_BEFORE.has(dir));

const FILES = [
  'README.md',
  '.env.example',
  '.github/workflows/ci.yml',
  'docs/guide.md',
  'docs/数据/报告😀.md',
  'docs/with space/file name.txt',
  'src/a.ts',
  'src/b.js',
  'src/sub/c.ts',
  'src/sub/deep/d.test.ts',
  'src/.hidden/e.ts',
  'src/dist/inner.js',
  '.git/config',
  '.git/hooks/pre-commit',
  'node_modules/pkg/index.js',
  'node_modules/pkg/index.ts',
  'target/debug/app.d',
  '.venv/lib/site.py',
  'dist/bundle.js',
  'packages/app/dist/out.js',
  'packages/app/src/main.ts',
  '__pycache__/x.pyc',
];

const PATTERNS = [
  '**/*',
  '*',
  '**/*.ts',
  '*.md',
  '**/*.md',
  'src/**',
  'src/*/*.ts',
  'src/**/*.ts',
  '**/*.js',
  'dist/**',
  '**/dist/**',
  'node_modules/**/*.js',
  '.git/*',
  '**/.*',
  '**/.*/**',
  '{src,docs}/**/*.{ts,md}',
  'src/[ab].?s',
  'src/[!a].?s',
  'link-to-src/*',
  'link-to-src/**/*.ts',
  '**/link*',
  '**/*😀*',
  'docs/数据/*',
  'docs/with space/*',
  'nomatch/*',
  '**/config',
  '**/*.py',
  '.venv/**/*.py',
  'target/**',
  './src//sub/',
  'src/sub/c.ts',
];

let workspace: string;
let outside: string;

beforeAll(async () => {
  workspace = await makeWorkspace();
  outside = await makeWorkspace();
  for (const file of FILES) {
    await mkdir(path.dirname(path.join(workspace, file)), { recursive: true });
    await writeFile(path.join(workspace, file), 'x');
  }
  await writeFile(path.join(outside, 'secret.ts'), 'x');
  await symlink(path.join(workspace, 'src'), path.join(workspace, 'link-to-src'));
  await symlink('src/a.ts', path.join(workspace, 'link-file.ts'));
  await symlink(outside, path.join(workspace, 'link-outside'));
  await symlink('.', path.join(workspace, 'src/sub/loop'));
  await symlink('missing.ts', path.join(workspace, 'dangling.ts'));
});

afterAll(async () => {
  await removeWorkspace(workspace);
  await removeWorkspace(outside);
});

/** What the glob tool lists for a pattern, as paths (an empty list for "no files match"). */
async function listed(pattern: string): Promise<string[]> {
  const outcome = await globTool.run({ pattern }, makeContext(workspace));
  expect(outcome.ok, outcome.output).toBe(true);
  return outcome.output.startsWith('no files match') ? [] : outcome.output.split('\n');
}

/**
 * Today's answer with the intended differences applied: 1. the newly skipped folders, unless named;
 * 2. a pattern ending in `/**` lists what is below a directory, no longer a file of that name itself
 * (the old `src/**` matched a file called `src`).
 */
function expectedFrom(before: string[], pattern: string): string[] {
  const itself = pattern.endsWith('/**') ? globToRegExp(pattern.slice(0, -3)) : null;
  return before.filter(
    (file) =>
      !itself?.test(file) &&
      file
        .split('/')
        .slice(0, -1)
        .every((segment) => !SKIPPED_NOW.includes(segment) || globNamesDir(pattern, segment)),
  );
}

describe('glob on tinyglobby against the matcher it replaced', () => {
  it.each(PATTERNS)(
    '%s lists what it listed before (heavy folders now skipped unless named)',
    async (pattern) => {
      const before = await legacyGlob(workspace, pattern);
      expect(await listed(pattern)).toEqual(expectedFrom(before, pattern));
    },
  );

  it('the intended differences change the answer of some patterns (the comparison is not vacuous)', async () => {
    expect(await legacyGlob(workspace, '**/*.js')).toContain('dist/bundle.js');
    expect(await listed('**/*.js')).not.toContain('dist/bundle.js');
    expect(await listed('**/*.js')).toContain('src/b.js');
    expect(await listed('dist/**')).toEqual(['dist/bundle.js']);
    expect(await listed('**/dist/**')).toEqual([
      'dist/bundle.js',
      'packages/app/dist/out.js',
      'src/dist/inner.js',
    ]);
  });

  it('lists symlinks as entries and never follows one, inside or out', async () => {
    const all = await listed('**/*');
    expect(all).toEqual(
      expect.arrayContaining(['link-to-src', 'link-file.ts', 'link-outside', 'dangling.ts', 'src/sub/loop']),
    );
    expect(all.some((file) => file.startsWith('link-to-src/') || file.startsWith('link-outside/'))).toBe(
      false,
    );
    expect(all.some((file) => file.includes('secret'))).toBe(false);
  });

  it('keeps the workspace boundary on real paths', async () => {
    const outcome = await globTool.run({ pattern: 'link-outside/*.ts' }, makeContext(workspace));
    expect(outcome.ok).toBe(false);
    expect(outcome.output).toMatch(/^outside the workspace/);
    const climbing = await globTool.run({ pattern: '*/../../*' }, makeContext(workspace));
    expect(climbing.ok).toBe(false);
    expect(climbing.output).toMatch(/only before the first wildcard/);
    const up = await globTool.run({ pattern: '../*' }, makeContext(workspace));
    expect(up.ok).toBe(false);
  });
});
