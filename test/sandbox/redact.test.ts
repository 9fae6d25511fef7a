import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  REDACTED,
  redactSecrets,
  secretsFromEnvironment,
  urlPassword,
} from '../../activities/sandbox/redact';

describe('redactSecrets', () => {
  it('replaces every occurrence of a long secret', () => {
    const key = 'sk-proj-AbC123xyz789';
    expect(redactSecrets(`a ${key} b ${key}`, [key])).toBe(`a ${REDACTED} b ${REDACTED}`);
  });

  it('replaces a secret inside a URL, percent-encoded or not, and JSON-escaped', () => {
    const password = 'p@ss:w/rd"long';
    const url = `postgres://goalrun:${encodeURIComponent(password)}@db:5432/goalrun`;
    expect(redactSecrets(url, [password])).toBe(`postgres://goalrun:${REDACTED}@db:5432/goalrun`);
    expect(redactSecrets(JSON.stringify({ password }), [password])).toBe(`{"password":"${REDACTED}"}`);
  });

  it('replaces a short secret only where it stands as a credential', () => {
    const text =
      'goalrun ran; postgres://goalrun:goalrun@db/goalrun; PGPASSWORD=goalrun; "password": "goalrun"';
    expect(redactSecrets(text, ['goalrun'])).toBe(
      `goalrun ran; postgres://goalrun:${REDACTED}@db/goalrun; PGPASSWORD=${REDACTED}; "password": "${REDACTED}"`,
    );
  });

  it('replaces the longer of two overlapping secrets whole', () => {
    expect(redactSecrets('xx-secret-value-longer', ['secret-value', 'xx-secret-value-longer'])).toBe(
      REDACTED,
    );
  });

  it('leaves text alone without secrets, and ignores empty ones', () => {
    expect(redactSecrets('nothing here', [])).toBe('nothing here');
    expect(redactSecrets('nothing here', ['', '   '])).toBe('nothing here');
  });

  it('never leaves a long secret in the text, whatever surrounds it', () => {
    const secret = fc.string({ minLength: 8, maxLength: 40 }).filter((s) => s.trim() !== '');
    fc.assert(
      fc.property(secret, fc.string(), fc.string(), (value, before, after) => {
        const redacted = redactSecrets(`${before}${value}${after}`, [value]);
        expect(redacted.includes(value)).toBe(false);
      }),
    );
  });
});

describe('secretsFromEnvironment', () => {
  it('collects secret-looking values and URL passwords, not ordinary settings', () => {
    const secrets = secretsFromEnvironment({
      OPENAI_API_KEY: 'sk-test-123456',
      CI_JOB_TOKEN: 'tok-abcdef',
      DATABASE_URL: 'postgres://u:db%40pass@h/db',
      PATH: '/usr/bin',
      FEATURE_KEY: '1',
      GOALRUN_TASK_QUEUE: 'goalrun',
    });
    expect(secrets.sort()).toEqual(['db@pass', 'sk-test-123456', 'tok-abcdef']);
  });

  it('reads URL passwords', () => {
    expect(urlPassword('postgres://u:pw@h/db')).toBe('pw');
    expect(urlPassword('postgres://u@h/db')).toBeUndefined();
    expect(urlPassword('not a url')).toBeUndefined();
  });
});
