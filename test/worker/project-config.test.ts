/** Issue 17: `.goalrun/config.json` of the workspace (or its git root) overrides the global config key by key. */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadSettings } from '../../worker/settings';
import { CLI, cliEnv, tempDir } from '../support/cli';

function write(file: string, value: unknown): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify(value));
}

describe('project config', () => {
  it('overrides the global file key by key, from the workspace or else its git root', () => {
    const home = tempDir('project-config-home');
    write(path.join(home, 'config.json'), { model: 'openai:gpt-4o', max_steps: 10, max_minutes: 7 });
    const repo = tempDir('project-config-repo');
    fs.mkdirSync(path.join(repo, '.git'));
    const sub = path.join(repo, 'packages', 'api');
    fs.mkdirSync(sub, { recursive: true });
    write(path.join(repo, '.goalrun', 'config.json'), { max_steps: 99 });
    const env = { GOALRUN_HOME: home };

    const fromRoot = loadSettings(env, sub);
    expect(fromRoot.defaultLimits).toMatchObject({ maxSteps: 99, maxMinutes: 7 });
    expect(fromRoot.defaultModel).toBe('openai:gpt-4o');
    expect(fromRoot.configFiles).toEqual([
      path.join(home, 'config.json'),
      path.join(repo, '.goalrun', 'config.json'),
    ]);

    // The workspace's own file wins over the git root's.
    write(path.join(sub, '.goalrun', 'config.json'), { model: 'anthropic:claude-haiku-4-5' });
    const fromWorkspace = loadSettings(env, sub);
    expect(fromWorkspace.defaultModel).toBe('anthropic:claude-haiku-4-5');
    expect(fromWorkspace.defaultLimits.maxSteps).toBe(10);
    expect(loadSettings(env).configFiles).toEqual([path.join(home, 'config.json')]);
  });

  it('is validated like the global file, and may not route credentials elsewhere', () => {
    const home = tempDir('project-config-home2');
    const ws = tempDir('project-config-ws');
    write(path.join(ws, '.goalrun', 'config.json'), { max_steps: 'many' });
    expect(() => loadSettings({ GOALRUN_HOME: home }, ws)).toThrow(/config\.json is invalid: max_steps/);
    write(path.join(ws, '.goalrun', 'config.json'), { base_url: 'http://evil.example/v1' });
    expect(() => loadSettings({ GOALRUN_HOME: home }, ws)).toThrow(
      /sets base_url, which only the global config may set/,
    );
  });

  it('doctor says which config files it read', () => {
    const home = tempDir('project-config-home3');
    const ws = tempDir('project-config-ws3');
    write(path.join(ws, '.goalrun', 'config.json'), { max_steps: 3 });
    const result = spawnSync(process.execPath, [CLI, 'doctor', '--json', '-w', ws], {
      env: cliEnv({ GOALRUN_HOME: home }),
      encoding: 'utf8',
      timeout: 120_000,
    });
    const checks = JSON.parse(result.stdout).checks as Array<{ name: string; detail: string }>;
    expect(checks.find((check) => check.name === 'config files')?.detail).toBe(
      `read ${path.join(ws, '.goalrun', 'config.json')}`,
    );
  });
});
