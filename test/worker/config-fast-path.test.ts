/**
 * The config fast path (worker/config-fast-path.ts) accepts a config without zod only when the zod
 * schema would accept it as it is; everything else goes to the schema, which words the error.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FAST_CONFIG_CHECKS, fastConfig, temporalHttpBaseUrl } from '../../worker/config-fast-path';
import { configSchema } from '../../worker/config-schema';
import { loadConfigFile } from '../../worker/settings';
import { tempDir } from '../support/cli';

/** Values of every JSON type, near each rule's edges. */
const SAMPLES: unknown[] = [
  '',
  'x',
  ' ',
  'openai:gpt-4o',
  'localhost:7243',
  'http://127.0.0.1:7243',
  'https://temporal.example/api/',
  'ftp://x',
  'http://',
  0,
  1,
  -1,
  1.5,
  3,
  50,
  99.5,
  100,
  101,
  2 ** 53,
  true,
  false,
  null,
  [],
  ['x'],
  {},
];

describe('the config fast path', () => {
  it('knows only keys of the schema', () => {
    const schemaKeys = Object.keys(configSchema().shape);
    for (const key of Object.keys(FAST_CONFIG_CHECKS)) expect(schemaKeys, key).toContain(key);
  });

  it('never accepts a value the schema rejects, and accepts what the schema accepts of plain keys', () => {
    for (const key of Object.keys(FAST_CONFIG_CHECKS)) {
      for (const value of SAMPLES) {
        const config = { [key]: value };
        const schema = configSchema().safeParse(config);
        const fast = fastConfig(config);
        if (fast) expect(schema.success, `${key}: ${JSON.stringify(value)}`).toBe(true);
        if (schema.success) {
          expect(fast, `${key}: ${JSON.stringify(value)}`).toEqual(schema.data);
        }
      }
    }
  });

  it('leaves keys with richer rules, unknown keys and non-objects to the schema', () => {
    expect(fastConfig({ base_url: 'http://localhost:11434/v1' })).toBeNull();
    expect(fastConfig({ sandbox: { mode: 'off' } })).toBeNull();
    expect(fastConfig({ modle: 'openai:gpt-4o' })).toBeNull();
    expect(fastConfig(JSON.parse('{"__proto__": "x"}'))).toBeNull();
    expect(fastConfig([])).toBeNull();
    expect(fastConfig('model')).toBeNull();
    expect(fastConfig({})).toEqual({});
    const plain = {
      model: 'openai:gpt-4o',
      max_steps: 40,
      auto_compact_enabled: false,
      temporal_http_address: 'localhost:7243',
    };
    expect(fastConfig(plain)).toEqual(plain);
  });

  it('gives the same verdicts and messages through loadConfigFile either way', () => {
    const dir = tempDir('config-fast');
    const write = (config: unknown) => {
      const file = path.join(dir, 'config.json');
      fs.writeFileSync(file, JSON.stringify(config));
      return file;
    };
    expect(loadConfigFile(write({ model: 'openai:gpt-4o', max_steps: 3 }))).toEqual({
      model: 'openai:gpt-4o',
      max_steps: 3,
    });
    expect(loadConfigFile(write({ base_url: 'http://localhost:11434/v1' }))).toEqual({
      base_url: 'http://localhost:11434/v1',
    });
    expect(() => loadConfigFile(write({ max_steps: 0 }))).toThrow(/max_steps/);
    expect(() => loadConfigFile(write({ modle: 'x' }))).toThrow(/is invalid/);
    expect(() => loadConfigFile(write({ temporal_http_address: 'ftp://x' }))).toThrow(
      /temporal_http_address: must be host:port or an http\(s\) URL/,
    );
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

describe('temporalHttpBaseUrl', () => {
  it('takes host:port or an http(s) URL, and gives a base URL without a trailing slash', () => {
    expect(temporalHttpBaseUrl('localhost:7243')).toBe('http://localhost:7243');
    expect(temporalHttpBaseUrl(' 127.0.0.1:7243 ')).toBe('http://127.0.0.1:7243');
    expect(temporalHttpBaseUrl('[::1]:7243')).toBe('http://[::1]:7243');
    expect(temporalHttpBaseUrl('http://127.0.0.1:7243/')).toBe('http://127.0.0.1:7243');
    expect(temporalHttpBaseUrl('https://temporal.example/api/')).toBe('https://temporal.example/api');
  });

  it('refuses other schemes, credentials, queries and nothing', () => {
    for (const bad of ['', 'ftp://x:1', 'http://', 'http://user:pw@x:1', 'http://x:1/?a=1', 'x:notaport']) {
      expect(temporalHttpBaseUrl(bad), bad).toBeNull();
    }
  });
});
