import { describe, expect, it } from 'vitest';
import {
  expandBraces,
  globBaseDir,
  globNamesDir,
  globToRegExp,
  normalizeGlob,
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

describe('globToRegExp', () => {
  it.each(CASES)('%s against %s → %s', (pattern, candidate, expected) => {
    expect(globToRegExp(pattern).test(candidate)).toBe(expected);
  });

  it('refuses patterns that expand to too many alternatives', () => {
    expect(() => globToRegExp('{a,b}'.repeat(12))).toThrow(/too many/);
  });
});

describe('glob helpers', () => {
  it('expands braces in written order', () => {
    expect(expandBraces('x{a,b{c,d}}y')).toEqual(['xay', 'xbcy', 'xbdy']);
    expect(expandBraces('{a,b}{1,2}')).toEqual(['a1', 'a2', 'b1', 'b2']);
    expect(expandBraces('\\{a,b}')).toEqual(['\\{a,b}']);
  });

  it('normalizes slashes', () => {
    expect(normalizeGlob('./a//b/')).toBe('a/b');
    expect(normalizeGlob('/')).toBe('/');
  });

  it('finds the literal base directory', () => {
    expect(globBaseDir('src/**/*.ts')).toBe('src');
    expect(globBaseDir('src/lib/*.ts')).toBe('src/lib');
    expect(globBaseDir('src/index.ts')).toBe('src');
    expect(globBaseDir('*.ts')).toBe('');
    expect(globBaseDir('{a,b}/x')).toBe('');
  });

  it('knows when a pattern names a directory', () => {
    expect(globNamesDir('node_modules/**/*.js', 'node_modules')).toBe(true);
    expect(globNamesDir('**/node_modules/x', 'node_modules')).toBe(true);
    expect(globNamesDir('{src,.git}/*', '.git')).toBe(true);
    expect(globNamesDir('.github/**', '.git')).toBe(false);
    expect(globNamesDir('**/*.js', 'node_modules')).toBe(false);
  });
});
