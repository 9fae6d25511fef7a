/** The secret values a goalrun process redacts: provider keys and every database password it knows. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { knownSecrets } from '../../worker/secrets';
import { loadSettings } from '../../worker/settings';

describe('knownSecrets', () => {
  it("knows the provider keys, DATABASE_URL's password and the config file's, even when the variable overrides it", () => {
    const home = mkdtempSync(path.join(os.tmpdir(), 'goalrun-secrets-'));
    writeFileSync(
      path.join(home, 'config.json'),
      JSON.stringify({ database_url: 'postgres://me:config-file-pass-1234@db.example/goalrun' }),
    );
    const settings = loadSettings({
      GOALRUN_HOME: home,
      OPENAI_API_KEY: 'sk-openai-key-5678',
      DATABASE_URL: 'postgres://me:env-pass-9876@db.example/goalrun',
    });
    expect(knownSecrets(settings).sort()).toEqual(
      ['config-file-pass-1234', 'env-pass-9876', 'sk-openai-key-5678'].sort(),
    );
  });
});
