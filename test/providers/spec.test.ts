import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  checkProviderConfig,
  createModelClient,
  normalizeModelSpec,
  parseModelSpec,
  resolveProviderSettings,
} from '../../activities/providers';
import { endpointKeyEnv, isOpenAIOwnUrl } from '../../activities/providers/spec';
import { ConfigError } from '../../core/errors';

const dir = mkdtempSync(path.join(tmpdir(), 'goalrun-spec-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, content: string): string {
  const full = path.join(dir, name);
  writeFileSync(full, content);
  return full;
}

/** The ConfigError message a call throws. */
function configErrorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).message;
  }
  throw new Error('expected a ConfigError');
}

describe('parseModelSpec', () => {
  it.each([
    ['openai:gpt-4o', 'openai', 'gpt-4o'],
    ['anthropic:claude-sonnet-4-5', 'anthropic', 'claude-sonnet-4-5'],
    ['ollama:llama3.1:8b', 'ollama', 'llama3.1:8b'],
    ['openai-compatible:qwen/qwen3-coder', 'openai-compatible', 'qwen/qwen3-coder'],
    ['scripted:./demo/turns.json', 'scripted', './demo/turns.json'],
    ['  openai:gpt-4o  ', 'openai', 'gpt-4o'],
  ])('parses %s', (spec, provider, model) => {
    expect(parseModelSpec(spec)).toEqual({ provider, model });
  });

  it('rejects an unknown provider, naming the spec and the valid providers', () => {
    const message = configErrorOf(() => parseModelSpec('gemini:pro'));
    expect(message).toContain('"gemini:pro"');
    expect(message).toContain('unknown provider "gemini"');
    expect(message).toContain('openai, anthropic, ollama, openai-compatible, scripted');
    expect(message).not.toContain('\n');
  });

  it('rejects a missing provider and an empty model', () => {
    expect(configErrorOf(() => parseModelSpec('gpt-4o'))).toContain('expected <provider>:<model>');
    expect(configErrorOf(() => parseModelSpec('openai:'))).toContain('the model name is empty');
    expect(configErrorOf(() => parseModelSpec('openai:   '))).toContain('the model name is empty');
    expect(configErrorOf(() => parseModelSpec(''))).toContain('expected <provider>:<model>');
  });
});

describe('normalizeModelSpec', () => {
  it('makes a scripted file absolute and leaves other specs alone', () => {
    expect(normalizeModelSpec('scripted:turns.json', '/work/x')).toBe('scripted:/work/x/turns.json');
    expect(normalizeModelSpec('scripted:/abs/turns.json', '/work/x')).toBe('scripted:/abs/turns.json');
    expect(normalizeModelSpec('ollama:llama3:8b', '/work/x')).toBe('ollama:llama3:8b');
  });
});

describe('checkProviderConfig', () => {
  it('names the missing API key and the model', () => {
    expect(configErrorOf(() => checkProviderConfig('openai:gpt-4o', {}))).toBe(
      'OPENAI_API_KEY is not set; it is needed for model openai:gpt-4o',
    );
    expect(configErrorOf(() => checkProviderConfig('anthropic:claude-x', { OPENAI_API_KEY: 'k' }))).toBe(
      'ANTHROPIC_API_KEY is not set; it is needed for model anthropic:claude-x',
    );
  });

  it('accepts providers whose key is set, and ollama without one', () => {
    expect(() => checkProviderConfig('openai:gpt-4o', { OPENAI_API_KEY: 'sk-x' })).not.toThrow();
    expect(() => checkProviderConfig('anthropic:claude-x', { ANTHROPIC_API_KEY: 'k' })).not.toThrow();
    expect(() => checkProviderConfig('ollama:llama3', {})).not.toThrow();
  });

  it('requires a base URL for openai-compatible, from the flag or OPENAI_BASE_URL', () => {
    const message = configErrorOf(() => checkProviderConfig('openai-compatible:m', {}));
    expect(message).toContain('--base-url');
    expect(message).toContain('OPENAI_BASE_URL');
    expect(() => checkProviderConfig('openai-compatible:m', {}, 'http://localhost:8000/v1')).not.toThrow();
    expect(() =>
      checkProviderConfig('openai-compatible:m', { OPENAI_BASE_URL: 'http://localhost:8000/v1' }),
    ).not.toThrow();
  });

  it('gives an openai-compatible endpoint its own key, never OPENAI_API_KEY unless it is api.openai.com', () => {
    const env = {
      OPENAI_API_KEY: 'sk-openai',
      OPENAI_COMPATIBLE_API_KEY: 'sk-compat',
      lookup: (name: string) => ({ MY_KEY: 'sk-mine' })[name],
    };
    const key = (url: string, named?: string) =>
      resolveProviderSettings(parseModelSpec('openai-compatible:m'), env, url, named).apiKey;
    expect(key('http://localhost:8000/v1')).toBe('sk-compat');
    expect(key('https://openrouter.ai/api/v1')).toBe('sk-compat');
    expect(key('http://localhost:8000/v1', 'MY_KEY')).toBe('sk-mine');
    expect(key('https://api.openai.com/v1')).toBe('sk-openai');
    expect(key('https://api.openai.com/v1', 'MY_KEY')).toBe('sk-mine');
    // Only OPENAI_API_KEY set: a third-party endpoint gets no key at all.
    expect(
      resolveProviderSettings(
        parseModelSpec('openai-compatible:m'),
        { OPENAI_API_KEY: 'sk-openai' },
        'http://x/v1',
      ).apiKey,
    ).toBeUndefined();
    // Not even a look-alike host, nor plain http, is OpenAI's own.
    expect(isOpenAIOwnUrl('https://api.openai.com.evil.example/v1')).toBe(false);
    expect(isOpenAIOwnUrl('http://api.openai.com/v1')).toBe(false);
    expect(endpointKeyEnv('http://x/v1', undefined, 'openai-compatible:m')).toBe('OPENAI_COMPATIBLE_API_KEY');
    expect(
      configErrorOf(() => endpointKeyEnv('http://x/v1', 'OPENAI_API_KEY', 'openai-compatible:m')),
    ).toMatch(/OPENAI_API_KEY is the key of api\.openai\.com and goes nowhere else/);
    for (const name of ['DATABASE_URL', 'ANTHROPIC_API_KEY', 'GOALRUN_PAYLOAD_KEYS', 'TEMPORAL_ADDRESS'])
      expect(configErrorOf(() => endpointKeyEnv('http://x/v1', name, 'openai-compatible:m'))).toMatch(
        /goalrun's own or another provider's, never an endpoint's key/,
      );
    expect(configErrorOf(() => endpointKeyEnv('http://x/v1', 'not a name', 'openai-compatible:m'))).toMatch(
      /is not a variable name/,
    );
  });

  it('rejects a base URL from the environment that carries credentials, without repeating them', () => {
    for (const [spec, env] of [
      ['openai-compatible:m', { OPENAI_BASE_URL: 'http://me:hunter2-secret@127.0.0.1:8000/v1' }],
      [
        'openai:gpt-4o',
        { OPENAI_API_KEY: 'sk-x', OPENAI_BASE_URL: 'https://me:hunter2-secret@proxy.example/v1' },
      ],
      ['ollama:m', { OLLAMA_BASE_URL: 'http://me:hunter2-secret@127.0.0.1:11434' }],
    ] as const) {
      const message = configErrorOf(() => checkProviderConfig(spec, env));
      expect(message, spec).toContain('carries credentials');
      expect(message, spec).not.toContain('hunter2-secret');
    }
  });

  it('rejects a base URL that is not http(s)', () => {
    expect(configErrorOf(() => checkProviderConfig('openai-compatible:m', {}, 'localhost:8000'))).toContain(
      'http:// or https://',
    );
    expect(configErrorOf(() => checkProviderConfig('ollama:m', { OLLAMA_BASE_URL: 'not a url' }))).toContain(
      'not a valid URL',
    );
  });

  it('accepts a valid script file', () => {
    const good = file('good.json', JSON.stringify({ turns: [{ text: 'hi' }] }));
    expect(() => checkProviderConfig(`scripted:${good}`, {})).not.toThrow();
  });

  it('names a missing script file', () => {
    const missing = path.join(dir, 'missing.json');
    expect(configErrorOf(() => checkProviderConfig(`scripted:${missing}`, {}))).toBe(
      `scripted model file ${missing} does not exist`,
    );
  });

  it('names a script file that is not JSON', () => {
    const bad = file('bad.json', '{ turns: ');
    expect(configErrorOf(() => checkProviderConfig(`scripted:${bad}`, {}))).toMatch(/is not valid JSON: /);
  });

  it('names where a script file breaks the schema', () => {
    const wrong = file(
      'wrong.json',
      JSON.stringify({
        turns: [{ text: 'ok' }, { toolCalls: [{ name: 'bash', args: 'ls' }] }, { txt: 'typo' }],
      }),
    );
    const message = configErrorOf(() => checkProviderConfig(`scripted:${wrong}`, {}));
    expect(message).toContain(`scripted model file ${wrong} is invalid`);
    expect(message).toContain('turns[1].toolCalls[0].args: args must be a JSON object');
    expect(message).toContain('turns[2]: Unrecognized key: "txt"');
  });

  it('rejects a tool call with both args and argsRaw', () => {
    const both = file(
      'both.json',
      JSON.stringify({ turns: [{ toolCalls: [{ name: 'x', args: {}, argsRaw: '{' }] }] }),
    );
    expect(configErrorOf(() => checkProviderConfig(`scripted:${both}`, {}))).toContain(
      'give either args or argsRaw, not both',
    );
  });

  it('names a script path that is not a readable file', () => {
    // A directory cannot be read as a file even by root (file modes would not stop root).
    const unreadable = file('as-dir.json', '{"turns":[]}');
    rmSync(unreadable);
    mkdirSync(unreadable);
    const message = configErrorOf(() => checkProviderConfig(`scripted:${unreadable}`, {}));
    expect(message).toBe(`scripted model file ${unreadable} is a directory`);
  });
});

describe('createModelClient', () => {
  it('fails fast with ConfigError on a bad spec or a missing key', () => {
    expect(() => createModelClient('nope:x', { env: {} })).toThrow(ConfigError);
    expect(() => createModelClient('openai:gpt-4o', { env: {} })).toThrow(ConfigError);
  });

  it('keeps the spec it was built from', () => {
    expect(createModelClient('ollama:llama3', { env: {} }).spec).toBe('ollama:llama3');
    expect(createModelClient('scripted:/nowhere.json', { env: {} }).spec).toBe('scripted:/nowhere.json');
  });
});
