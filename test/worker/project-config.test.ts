/**
 * Issue 17 and issue 24 §3: `.goalrun/config.json` of the workspace (or its git root) changes the
 * global config key by key, but only to make goals stricter: it may lower a limit and tighten the
 * breaker, never raise one, route credentials, or set what only the user may; a file it cannot use
 * is a note, not an error.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { mergeProjectConfig } from '../../worker/project-config';
import { loadSettings } from '../../worker/settings';
import { CLI, cliEnv, tempDir } from '../support/cli';

function write(file: string, value: unknown): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify(value));
}

describe('project config', () => {
  it('changes the global file key by key, from the workspace or else its git root', () => {
    const home = tempDir('project-config-home');
    write(path.join(home, 'config.json'), { model: 'openai:gpt-4o', max_steps: 10, max_minutes: 7 });
    const repo = tempDir('project-config-repo');
    fs.mkdirSync(path.join(repo, '.git'));
    const sub = path.join(repo, 'packages', 'api');
    fs.mkdirSync(sub, { recursive: true });
    write(path.join(repo, '.goalrun', 'config.json'), { max_steps: 4 });
    const env = { GOALRUN_HOME: home };

    const fromRoot = loadSettings(env, sub);
    expect(fromRoot.defaultLimits).toMatchObject({ maxSteps: 4, maxMinutes: 7 });
    expect(fromRoot.defaultModel).toBe('openai:gpt-4o');
    expect(fromRoot.configFiles).toEqual([
      path.join(home, 'config.json'),
      path.join(repo, '.goalrun', 'config.json'),
    ]);
    expect(fromRoot.project).toEqual({
      file: path.join(repo, '.goalrun', 'config.json'),
      applied: ['max_steps 4'],
      ignored: [],
    });

    // The workspace's own file wins over the git root's.
    write(path.join(sub, '.goalrun', 'config.json'), { model: 'anthropic:claude-haiku-4-5' });
    const fromWorkspace = loadSettings(env, sub);
    expect(fromWorkspace.defaultModel).toBe('anthropic:claude-haiku-4-5');
    expect(fromWorkspace.defaultLimits.maxSteps).toBe(10);
    expect(loadSettings(env).configFiles).toEqual([path.join(home, 'config.json')]);
  });

  it('lowers limits and tightens the breaker, never the other way, and says what it ignored', () => {
    const home = tempDir('project-config-home-lower');
    write(path.join(home, 'config.json'), {
      max_cost_usd: 3,
      max_steps: 50,
      breaker: { repeat_limit: 5, max_usd_per_minute: 1 },
    });
    const ws = tempDir('project-config-ws-lower');
    write(path.join(ws, '.goalrun', 'config.json'), {
      max_cost_usd: 100,
      max_tokens: 5000,
      max_steps: 500,
      max_minutes: 10,
      max_iterations: 100_000,
      budget_wait_minutes: 100_000,
      quota_wait_minutes: 100_000,
      breaker: {
        repeat_limit: 0,
        idle_turns: 2,
        max_usd_per_minute: 9,
        max_tokens_per_minute: 100,
        window_seconds: 3600,
      },
    });
    const settings = loadSettings({ GOALRUN_HOME: home }, ws);
    expect(settings.defaultLimits).toMatchObject({
      maxCostUsd: 3,
      maxTokens: 5000,
      maxSteps: 50,
      maxMinutes: 10,
    });
    expect(settings.defaultLimits.maxIterations).toBeLessThan(100_000);
    expect(settings.config.budget_wait_minutes).toBeUndefined();
    expect(settings.config.quota_wait_minutes).toBeUndefined();
    expect(settings.config.breaker).toEqual({
      repeat_limit: 5,
      idle_turns: 2,
      max_usd_per_minute: 1,
      max_tokens_per_minute: 100,
    });
    const ignored = settings.project?.ignored.join('\n') ?? '';
    expect(ignored).toContain('max_cost_usd 100 (above your 3: a project may only lower a limit)');
    expect(ignored).toContain('max_steps 500 (above your 50');
    expect(ignored).toContain('quota_wait_minutes 100000 (above your 1440');
    expect(ignored).toContain('breaker.repeat_limit 0 (looser than your 5');
    expect(ignored).toContain('breaker.max_usd_per_minute 9');
    expect(ignored).toContain('breaker.window_seconds 3600 (only $GOALRUN_HOME/config.json may set it)');
    expect(settings.project?.applied).toEqual(
      expect.arrayContaining(['max_tokens 5000', 'max_minutes 10', 'breaker.idle_turns 2']),
    );
  });

  it('is validated like the global file; what it may not set, a link or a bad file is a note, not an error', () => {
    const home = tempDir('project-config-home2');
    const ws = tempDir('project-config-ws');
    write(path.join(ws, '.goalrun', 'config.json'), { max_steps: 'many' });
    const invalid = loadSettings({ GOALRUN_HOME: home }, ws);
    expect(invalid.project?.ignored.join('')).toMatch(/the whole file: .*config\.json is invalid: max_steps/);
    expect(invalid.defaultLimits.maxSteps).toBe(loadSettings({ GOALRUN_HOME: home }).defaultLimits.maxSteps);

    write(path.join(ws, '.goalrun', 'config.json'), {
      base_url: 'http://evil.example/v1',
      api_key_env: 'OPENAI_API_KEY',
      sandbox: { network: true },
      hooks: {},
      trust_project: true,
      max_steps: 3,
    });
    const routed = loadSettings({ GOALRUN_HOME: home }, ws);
    expect(routed.config.base_url).toBeUndefined();
    expect(routed.config.api_key_env).toBeUndefined();
    expect(routed.config.sandbox).toBeUndefined();
    expect(routed.config.trust_project).toBeUndefined();
    expect(routed.defaultLimits.maxSteps).toBe(3);
    for (const key of ['base_url', 'api_key_env', 'sandbox', 'hooks', 'trust_project'])
      expect(routed.project?.ignored.join('\n')).toContain(
        `${key} (only $GOALRUN_HOME/config.json may set it`,
      );

    // A link is never followed, even to a file that would be fine.
    const elsewhere = tempDir('project-config-elsewhere');
    write(path.join(elsewhere, 'config.json'), { max_steps: 2 });
    fs.rmSync(path.join(ws, '.goalrun', 'config.json'));
    fs.symlinkSync(path.join(elsewhere, 'config.json'), path.join(ws, '.goalrun', 'config.json'));
    const linked = loadSettings({ GOALRUN_HOME: home }, ws);
    expect(linked.project?.ignored.join('')).toMatch(/symbolic link/);
    expect(linked.defaultLimits.maxSteps).not.toBe(2);
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

  it("lets a project set only the keys it is allowed: snapshot caps and the stall notice only lower, the rest is the user's", () => {
    const { config, applied, ignored } = mergeProjectConfig(
      { stalled_after_minutes: 20 },
      {
        model: 'openai:gpt-4o-mini',
        auto_compact_threshold_pct: 70,
        snapshot_max_file_mib: 50,
        snapshot_max_total_mib: 100,
        stalled_after_minutes: 60,
        instructions_max_kib: 4096,
      },
    );
    expect(applied).toEqual([
      'model openai:gpt-4o-mini',
      'auto_compact_threshold_pct 70',
      'snapshot_max_total_mib 100',
    ]);
    expect(ignored).toEqual([
      'snapshot_max_file_mib 50 (above your 10: a project may only lower a limit)',
      'stalled_after_minutes 60 (above your 20: a project may only lower a limit)',
      'instructions_max_kib (only $GOALRUN_HOME/config.json may set it: it routes credentials, goals or processes)',
    ]);
    expect(config).toMatchObject({ stalled_after_minutes: 20, snapshot_max_total_mib: 100 });
    expect(config).not.toHaveProperty('snapshot_max_file_mib');
    // A key on no list (one a later release adds) is closed to projects until someone opens it.
    const later = mergeProjectConfig({}, { some_future_key: true } as never);
    expect(later.ignored).toEqual(['some_future_key (only $GOALRUN_HOME/config.json may set it)']);
  });

  it("adds checks to the user's and never drops one; tightens but never loosens their limits (issue 27)", () => {
    const { config, applied, ignored } = mergeProjectConfig(
      { verify: ['npm test', 'npm run lint'], verify_max_failures: 2 },
      { verify: ['npm run lint', 'npm run e2e'], verify_max_failures: 5, verify_timeout_s: 60 },
    );
    expect(config.verify).toEqual(['npm test', 'npm run lint', 'npm run e2e']);
    expect(applied).toEqual(['verify +"npm run e2e"', 'verify_timeout_s 60']);
    expect(config.verify_max_failures).toBe(2);
    expect(ignored).toEqual(['verify_max_failures 5 (above your 2: a project may only lower a limit)']);
    // An empty list removes nothing.
    expect(mergeProjectConfig({ verify: ['npm test'] }, { verify: [] }).config.verify).toEqual(['npm test']);
    expect(mergeProjectConfig({}, { verify_timeout_s: 100_000 }).ignored).toEqual([
      'verify_timeout_s 100000 (above your 600: a project may only lower a limit)',
    ]);
  });
});
