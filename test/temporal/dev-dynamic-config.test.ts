/**
 * Issue 10: every Temporal server goalrun sets up gets the same latency settings: the dev servers
 * (`goalrun dev`, the background server, the test server) through devServerArgs, and the
 * docker-compose server through temporal/dynamicconfig/goalrun.yaml.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  devServerArgs,
  GOALRUN_DEV_DYNAMIC_CONFIG,
  GOALRUN_DEV_SQLITE_PRAGMAS,
} from '../../cli/temporal-address';

const ROOT = path.resolve(__dirname, '../..');

/** The values of one repeated flag, in order. */
function flagValues(args: string[], flag: string): string[] {
  return args.flatMap((arg, i) => (arg === flag ? [args[i + 1]] : []));
}

describe("goalrun's dev server tuning", () => {
  it('turns on eager activities and a fast transfer queue', () => {
    expect(GOALRUN_DEV_DYNAMIC_CONFIG['system.enableActivityEagerExecution']).toBe(true);
    expect(GOALRUN_DEV_DYNAMIC_CONFIG['history.transferProcessorMaxPollRPS']).toBeGreaterThan(20);
  });

  it('passes every setting to the dev server, and the SQLite pragmas only with a db file', () => {
    const inMemory = devServerArgs({ port: 7233, headless: true });
    const expected = Object.entries(GOALRUN_DEV_DYNAMIC_CONFIG).map(
      ([key, value]) => `${key}=${JSON.stringify(value)}`,
    );
    expect(flagValues(inMemory, '--dynamic-config-value')).toEqual(expected);
    expect(inMemory).not.toContain('--sqlite-pragma');

    const persisted = devServerArgs({ port: 7233, dbFile: '/data/temporal.db' });
    expect(flagValues(persisted, '--sqlite-pragma')).toEqual(
      Object.entries(GOALRUN_DEV_SQLITE_PRAGMAS).map(([pragma, value]) => `${pragma}=${value}`),
    );
  });

  it('lets a caller override one setting and keeps the others', () => {
    const args = devServerArgs({
      port: 7233,
      dynamicConfig: {
        'history.transferProcessorMaxPollRPS': 50,
        'limit.historyCount.suggestContinueAsNew': 40,
      },
    });
    const values = flagValues(args, '--dynamic-config-value');
    expect(values).toContain('history.transferProcessorMaxPollRPS=50');
    expect(values).not.toContain('history.transferProcessorMaxPollRPS=1000');
    expect(values).toContain('system.enableActivityEagerExecution=true');
    expect(values).toContain('limit.historyCount.suggestContinueAsNew=40');
  });

  it("leaves everything out with serverDefaults (benchmarks compare against Temporal's defaults)", () => {
    const args = devServerArgs({ port: 7233, dbFile: '/data/temporal.db', serverDefaults: true });
    expect(args).not.toContain('--dynamic-config-value');
    expect(args).not.toContain('--sqlite-pragma');
  });

  it('gives the docker-compose server the same settings, plus the versioning hint the dev server lacks', () => {
    const compose = readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8');
    const file = /DYNAMIC_CONFIG_FILE_PATH: \/etc\/temporal\/config\/dynamicconfig\/(\S+)/.exec(compose)?.[1];
    expect(file).toBeDefined();
    expect(compose).toContain('./temporal/dynamicconfig:/etc/temporal/config/dynamicconfig');
    const yaml = readFileSync(path.join(ROOT, 'temporal/dynamicconfig', file!), 'utf8');
    // A pinned goal learns at its next step that a newer build is current (Worker Deployments,
    // docs/deploying.md); the dev server (1.29.1) ignores the setting, so only the real server has it.
    expect(dynamicConfigFile(yaml)).toEqual({
      ...GOALRUN_DEV_DYNAMIC_CONFIG,
      'system.enableSuggestCaNOnNewTargetVersion': true,
    });
  });
});

/** Reads Temporal's dynamic config format (`key:` then `- value: X` with no constraints), enough for this file. */
function dynamicConfigFile(yaml: string): Record<string, unknown> {
  const settings: Record<string, unknown> = {};
  let key: string | undefined;
  for (const line of yaml.split('\n')) {
    if (line.trim() === '' || line.trimStart().startsWith('#')) continue;
    const top = /^([\w.]+):\s*$/.exec(line);
    if (top) {
      key = top[1];
      continue;
    }
    const value = /^\s+- value:\s*(.+)$/.exec(line);
    if (value && key) settings[key] = JSON.parse(value[1]);
  }
  return settings;
}
