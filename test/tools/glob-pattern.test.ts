import { describe, expect, it } from 'vitest';
import {
  globMatcher,
  globNamesDir,
  normalizeGlob,
  skippedDirsFor,
  splitGlob,
} from '../../activities/tools/glob-pattern';

/** [pattern, path, matches] */
const CASES: Array<[string, string, boolean]> = [
  ['*.ts', 'a.ts', true],
  ['*.ts', 'src/a.ts', false],
  ['*.ts', 'a.tsx', false],
  ['*', '.env', true],
  ['src/*', 'src/a.ts', true],
  ['src/*', 'src/sub/a.ts', false],
  ['**/*.ts', 'a.ts', true],
  ['**/*.ts', 'src/sub/deep/a.ts', true],
  ['**/*.ts', 'src/a.js', false],
  ['src/**/*.ts', 'src/a.ts', true],
  ['src/**/*.ts', 'src/x/y/a.ts', true],
  ['src/**/*.ts', 'lib/a.ts', false],
  ['src/**/*.ts', 'srcx/a.ts', false],
  ['src/**', 'src/x/y', true],
  ['src/**', 'src', true],
  ['src/**', 'srcx/a', false],
  ['**', 'any/thing/at/all', true],
  ['a/**/**/b', 'a/x/b', true],
  ['a/**/b', 'a/b', true],
  ['a/**/b', 'a/x/y/b', true],
  ['a/**/b', 'a/xb', false],
  ['file?.txt', 'file1.txt', true],
  ['file?.txt', 'file10.txt', false],
  ['file?.txt', 'file/.txt', false],
  ['[abc].md', 'b.md', true],
  ['[abc].md', 'd.md', false],
  ['[a-c]x', 'bx', true],
  ['[!a-c]x', 'dx', true],
  ['[!a-c]x', 'ax', false],
  ['[^a-c]x', 'ax', false],
  ['[]]x', ']x', true],
  ['[unclosed', '[unclosed', true],
  ['*.{js,ts}', 'a.js', true],
  ['*.{js,ts}', 'a.ts', true],
  ['*.{js,ts}', 'a.css', false],
  ['{src,lib}/**/*.{js,ts}', 'lib/x/a.ts', true],
  ['{src,lib}/**/*.{js,ts}', 'test/a.ts', false],
  ['x{a,b{c,d}}', 'xbd', true],
  ['x{a,b{c,d}}', 'xb', false],
  ['{a}', '{a}', true],
  ['{a,b', '{a,b', true],
  ['a.b', 'axb', false],
  ['(x)+$', '(x)+$', true],
  ['\\*.txt', '*.txt', true],
  ['\\*.txt', 'a.txt', false],
  ['./src//a.ts', 'src/a.ts', true],
  ['src/', 'src', true],
];

/** The cases picomatch reads differently from the matcher before it (issue 31), each on purpose. */
const CHANGED: Array<[string, string, boolean]> = [
  // Parentheses group alternatives (`(a|b)`) to picomatch; a name with them is matched by escaping: `\\(x\\)`.
  ['(x)+$', '(x)+$', false],
  ['\\(x\\)+$', '(x)+$', true],
  // An unclosed brace is an error to picomatch and matches nothing; the old matcher read it literally.
  ['{a,b', '{a,b', false],
];

describe('globMatcher (picomatch, as the glob and grep tools read patterns)', () => {
  const changed = new Set(CHANGED.map(([pattern, candidate]) => `${pattern} ${candidate}`));
  it.each(CASES.filter(([pattern, candidate]) => !changed.has(`${pattern} ${candidate}`)))(
    '%s against %s → %s, as before',
    (pattern, candidate, expected) => {
      expect(globMatcher(pattern).test(candidate)).toBe(expected);
    },
  );

  it.each(CHANGED)('%s against %s → %s (changed on purpose)', (pattern, candidate, expected) => {
    expect(globMatcher(pattern).test(candidate)).toBe(expected);
  });

  it('reads a leading ! and +(…) as characters', () => {
    expect(globMatcher('!a.txt').test('!a.txt')).toBe(true);
    expect(globMatcher('+(a|b).txt').test('a.txt')).toBe(false);
  });
});

describe('glob helpers', () => {
  it('normalizes slashes', () => {
    expect(normalizeGlob('./a//b/')).toBe('a/b');
    expect(normalizeGlob('/')).toBe('/');
  });

  it('splits a pattern at its literal base directory', () => {
    expect(splitGlob('src/**/*.ts')).toEqual({ base: 'src', glob: '**/*.ts' });
    expect(splitGlob('src/lib/*.ts')).toEqual({ base: 'src/lib', glob: '*.ts' });
    expect(splitGlob('src/index.ts')).toEqual({ base: 'src', glob: 'index.ts' });
    expect(splitGlob('*.ts')).toEqual({ base: '', glob: '*.ts' });
    expect(splitGlob('{a,b}/x')).toEqual({ base: '', glob: '{a,b}/x' });
    expect(splitGlob('a\\*b/*.ts')).toEqual({ base: '', glob: 'a\\*b/*.ts' });
  });

  it('refuses `..` after the first wildcard (it could climb out of the walked directory)', () => {
    expect(() => splitGlob('*/../../etc/*')).toThrow(/only before the first wildcard/);
    expect(() => splitGlob('{..,a}/x*')).toThrow(/only before the first wildcard/);
    expect(splitGlob('src/../lib/*.ts')).toEqual({ base: 'src/../lib', glob: '*.ts' });
  });

  it('skips heavy folders unless the pattern names them', () => {
    expect(skippedDirsFor('**/*.ts')).toEqual(new Set(skippedDirsFor(undefined)));
    expect(skippedDirsFor('dist/**/*.js').has('dist')).toBe(false);
    expect(skippedDirsFor('dist/**/*.js').has('node_modules')).toBe(true);
  });

  it('knows when a pattern names a directory', () => {
    expect(globNamesDir('node_modules/**/*.js', 'node_modules')).toBe(true);
    expect(globNamesDir('**/node_modules/x', 'node_modules')).toBe(true);
    expect(globNamesDir('{src,.git}/*', '.git')).toBe(true);
    expect(globNamesDir('.github/**', '.git')).toBe(false);
    expect(globNamesDir('**/*.js', 'node_modules')).toBe(false);
  });
});
