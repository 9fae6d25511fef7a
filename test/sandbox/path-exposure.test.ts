import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { exposedPathDirs, exposureRootOf } from '../../activities/sandbox/path-exposure';

const root = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'goalrun-exposure-')));
const home = path.join(root, 'home');
const node = path.join(home, '.nvm', 'versions', 'node', 'v20');
const cargoBin = path.join(home, '.cargo', 'bin');

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('exposedPathDirs', () => {
  it('shows PATH directories under a hidden home, and the packages their links lead to, nothing else', () => {
    mkdirSync(path.join(node, 'bin'), { recursive: true });
    mkdirSync(path.join(node, 'lib', 'node_modules', 'npm', 'bin'), { recursive: true });
    mkdirSync(path.join(node, 'lib', 'node_modules', '@scope', 'tool', 'dist'), { recursive: true });
    mkdirSync(cargoBin, { recursive: true });
    writeFileSync(path.join(node, 'bin', 'node'), '');
    writeFileSync(path.join(node, 'lib', 'node_modules', 'npm', 'bin', 'npm-cli.js'), '');
    writeFileSync(path.join(node, 'lib', 'node_modules', '@scope', 'tool', 'dist', 'cli.js'), '');
    symlinkSync('../lib/node_modules/npm/bin/npm-cli.js', path.join(node, 'bin', 'npm'));
    symlinkSync('../lib/node_modules/@scope/tool/dist/cli.js', path.join(node, 'bin', 'tool'));
    symlinkSync('/usr/bin/env', path.join(node, 'bin', 'outside-link'));
    writeFileSync(path.join(home, '.cargo', 'credentials.toml'), 'token');
    const PATH = [
      path.join(node, 'bin'),
      cargoBin,
      '/usr/bin',
      'relative/bin',
      path.join(home, 'missing'),
    ].join(':');
    expect(exposedPathDirs(PATH, [home], [], []).sort()).toEqual(
      [
        path.join(node, 'bin'),
        path.join(node, 'lib', 'node_modules', '@scope', 'tool'),
        path.join(node, 'lib', 'node_modules', 'npm'),
        cargoBin,
      ].sort(),
    );
  });

  it('exposes nothing outside hidden directories or inside visible ones', () => {
    expect(exposedPathDirs('/usr/bin:/bin', [home], [], [])).toEqual([]);
    expect(exposedPathDirs(cargoBin, [home], [home], [])).toEqual([]);
  });
});

describe('exposureRootOf', () => {
  it('cuts at the package inside node_modules, else takes the directory', () => {
    expect(exposureRootOf('/h/lib/node_modules/npm/bin/npm-cli.js')).toBe('/h/lib/node_modules/npm');
    expect(exposureRootOf('/h/lib/node_modules/@s/t/cli.js')).toBe('/h/lib/node_modules/@s/t');
    expect(exposureRootOf('/h/.local/share/tool/run')).toBe('/h/.local/share/tool');
  });
});
