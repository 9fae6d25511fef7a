import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isForbiddenEnvName, toolEnvironment } from '../../activities/sandbox/environment';

const worker = {
  PATH: '/usr/bin:/bin',
  HOME: '/home/me',
  LANG: 'C.UTF-8',
  LC_ALL: 'C.UTF-8',
  LC_TIME: 'en_GB.UTF-8',
  TERM: 'xterm',
  TZ: 'Europe/Rome',
  USER: 'me',
  SHELL: '/bin/bash',
  TMPDIR: '/var/tmp',
  OPENAI_API_KEY: 'sk-1',
  OPENAI_BASE_URL: 'https://proxy',
  ANTHROPIC_API_KEY: 'sk-2',
  OLLAMA_HOST: 'x',
  GITHUB_TOKEN: 'ghp',
  DATABASE_URL: 'postgres://u:p@h/db',
  TEMPORAL_ADDRESS: 'h:7233',
  GOALRUN_HOME: '/home/me/.goalrun',
  NODE_ENV: 'production',
  CI: 'true',
};

describe('toolEnvironment', () => {
  it('passes only the base names and locale settings', () => {
    expect(toolEnvironment(worker, [])).toEqual({
      PATH: '/usr/bin:/bin',
      HOME: '/home/me',
      LANG: 'C.UTF-8',
      LC_ALL: 'C.UTF-8',
      LC_TIME: 'en_GB.UTF-8',
      TERM: 'xterm',
      TZ: 'Europe/Rome',
      USER: 'me',
      SHELL: '/bin/bash',
      TMPDIR: '/var/tmp',
    });
  });

  it('adds names the goal lists, but never forbidden ones', () => {
    const env = toolEnvironment(worker, [
      'NODE_ENV',
      'CI',
      'GITHUB_TOKEN',
      'DATABASE_URL',
      'OPENAI_BASE_URL',
      'GOALRUN_HOME',
      'TEMPORAL_ADDRESS',
      'MISSING',
    ]);
    expect(env.NODE_ENV).toBe('production');
    expect(env.CI).toBe('true');
    for (const name of [
      'GITHUB_TOKEN',
      'DATABASE_URL',
      'OPENAI_BASE_URL',
      'GOALRUN_HOME',
      'TEMPORAL_ADDRESS',
      'MISSING',
    ])
      expect(env).not.toHaveProperty(name);
  });

  it('applies the sandbox overrides last', () => {
    const env = toolEnvironment(worker, [], { HOME: '/tmp/home', TMPDIR: '/tmp', TERM: undefined });
    expect(env.HOME).toBe('/tmp/home');
    expect(env.TMPDIR).toBe('/tmp');
    expect(env).not.toHaveProperty('TERM');
  });

  it('forbids every name with KEY, TOKEN, SECRET or PASSWORD in it, in any case, wherever it is listed', () => {
    const part = fc.constantFrom('KEY', 'token', 'Secret', 'PASSWORD', 'passwd', 'CREDENTIAL');
    const affix = fc.stringMatching(/^[A-Za-z0-9_]{0,8}$/);
    fc.assert(
      fc.property(affix, part, affix, (before, middle, after) => {
        const name = `${before}${middle}${after}`;
        expect(isForbiddenEnvName(name)).toBe(true);
        expect(toolEnvironment({ [name]: 'v' }, [name])).toEqual({});
      }),
    );
  });

  it('forbids goalrun, Temporal and provider prefixes and DATABASE_URL', () => {
    for (const name of [
      'GOALRUN_X',
      'TEMPORAL_Y',
      'OPENAI_ORG',
      'ANTHROPIC_BASE_URL',
      'OLLAMA_HOST',
      'DATABASE_URL',
      'database_url',
    ])
      expect(isForbiddenEnvName(name), name).toBe(true);
    for (const name of ['PATH', 'HOME', 'NODE_ENV', 'CI', 'LANG'])
      expect(isForbiddenEnvName(name), name).toBe(false);
  });

  it("never passes the Temporal connection's credentials, even when a goal lists them (issue 29)", () => {
    const connection = {
      TEMPORAL_API_KEY: 'tmprl-key-1234567890',
      TEMPORAL_TLS: 'true',
      TEMPORAL_TLS_CLIENT_CERT_PATH: '/certs/client.pem',
      TEMPORAL_TLS_CLIENT_KEY_PATH: '/certs/client.key',
      TEMPORAL_TLS_CLIENT_KEY_DATA: '-----BEGIN PRIVATE KEY-----',
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: '/certs/ca.pem',
      TEMPORAL_TLS_SERVER_NAME: 'temporal.internal',
      TEMPORAL_PROFILE: 'prod',
      TEMPORAL_CONFIG_FILE: '/etc/temporal.toml',
      TEMPORAL_GRPC_META_AUTHORIZATION: 'Bearer x',
    };
    const env = toolEnvironment({ ...worker, ...connection }, Object.keys(connection));
    for (const name of Object.keys(connection)) expect(env, name).not.toHaveProperty(name);
    expect(Object.values(env).join(' ')).not.toContain('tmprl-key');
  });
});
