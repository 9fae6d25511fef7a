/**
 * Issue 29: how a goalrun process finds its Temporal connection: the TEMPORAL_* variables over a
 * temporal.toml profile (--profile, TEMPORAL_PROFILE, else `default`), then goalrun's config keys,
 * then the defaults; where each setting came from; and the options the SDK's connections get.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../core/errors';
import { connectOptions, describeConnectionSettings } from '../../worker/connection-options';
import { knownSecrets } from '../../worker/secrets';
import { loadSettings } from '../../worker/settings';
import { isSecured, resolveTemporalConnection } from '../../worker/temporal-connection';
import { tempDir } from '../support/cli';

const API_KEY = 'tmprl-api-key-7f3a9c21e8';

/** A temporal.toml with these contents; returns the variables that make envconfig read it. */
function profiles(toml: string): { TEMPORAL_CONFIG_FILE: string } {
  const file = path.join(tempDir('temporal-toml'), 'temporal.toml');
  fs.writeFileSync(file, toml);
  return { TEMPORAL_CONFIG_FILE: file };
}

const TWO_PROFILES = `
[profile.default]
address = "default.example:7233"
namespace = "from-default"

[profile.prod]
address = "prod.example:7233"
namespace = "prod.acct"
api_key = "${API_KEY}"

[profile.mtls]
address = "mtls.example:7233"
[profile.mtls.tls]
client_cert_path = "/certs/client.pem"
client_key_path = "/certs/client.key"
server_ca_cert_path = "/certs/ca.pem"
server_name = "temporal.internal"
`;

describe('resolveTemporalConnection', () => {
  it('uses the variables, then goalrun config keys, then the defaults, and says which', () => {
    const none = resolveTemporalConnection({ HOME: tempDir('no-toml') }, {});
    expect(none).toMatchObject({
      address: 'localhost:7233',
      namespace: 'default',
      tls: false,
      profile: null,
    });
    expect(none.origins).toEqual({ address: 'default', namespace: 'default' });
    expect(isSecured(none)).toBe(false);

    const config = resolveTemporalConnection(
      { HOME: tempDir('no-toml') },
      { temporal_address: 'cfg:7233', temporal_namespace: 'cfg-ns' },
      { configPath: '/home/me/.goalrun/config.json' },
    );
    expect(config).toMatchObject({ address: 'cfg:7233', namespace: 'cfg-ns' });
    expect(config.origins.address).toBe('temporal_address in /home/me/.goalrun/config.json');

    const vars = resolveTemporalConnection(
      { HOME: tempDir('no-toml'), TEMPORAL_ADDRESS: 'env:7233', TEMPORAL_NAMESPACE: '' },
      { temporal_address: 'cfg:7233', temporal_namespace: 'cfg-ns' },
    );
    // An empty variable counts as unset, as goalrun has always read it.
    expect(vars).toMatchObject({ address: 'env:7233', namespace: 'cfg-ns' });
    expect(vars.origins.address).toBe('TEMPORAL_ADDRESS');
  });

  it('takes a temporal.toml without profiles (an empty one) as having none', () => {
    const empty = profiles('# nothing here yet\n');
    expect(resolveTemporalConnection(empty, {})).toMatchObject({ address: 'localhost:7233', profile: null });
    expect(() => resolveTemporalConnection({ ...empty, TEMPORAL_PROFILE: 'prod' }, {})).toThrow(
      /names the profile "prod", which .* does not have \(it has no profile\)/,
    );
  });

  it("reads the file's default profile, a profile TEMPORAL_PROFILE names, and --profile over both", () => {
    const file = profiles(TWO_PROFILES);
    const implicit = resolveTemporalConnection(file, { temporal_address: 'cfg:7233' });
    expect(implicit).toMatchObject({ address: 'default.example:7233', namespace: 'from-default' });
    expect(implicit.profile).toEqual({ name: 'default', file: file.TEMPORAL_CONFIG_FILE, named: false });
    expect(implicit.origins.address).toBe(`address of profile "default" in ${file.TEMPORAL_CONFIG_FILE}`);

    const prod = resolveTemporalConnection({ ...file, TEMPORAL_PROFILE: 'prod' }, {});
    expect(prod).toMatchObject({ address: 'prod.example:7233', namespace: 'prod.acct', apiKey: API_KEY });
    // An API key turns TLS on, with the system's roots.
    expect(prod.tls).toEqual({});
    expect(isSecured(prod)).toBe(true);

    const flag = resolveTemporalConnection({ ...file, TEMPORAL_PROFILE: 'prod' }, {}, { profile: 'mtls' });
    expect(flag.profile?.name).toBe('mtls');
    expect(flag.tls).toEqual({
      serverName: 'temporal.internal',
      clientCert: { path: '/certs/client.pem' },
      clientKey: { path: '/certs/client.key' },
      serverCa: { path: '/certs/ca.pem' },
    });
    expect(flag.apiKey).toBeUndefined();
  });

  it('lets each variable win over the profile key, and names the variable as its origin', () => {
    const file = profiles(TWO_PROFILES);
    const settings = resolveTemporalConnection(
      {
        ...file,
        TEMPORAL_PROFILE: 'mtls',
        TEMPORAL_ADDRESS: 'override:7233',
        TEMPORAL_TLS_SERVER_CA_CERT_PATH: '/other/ca.pem',
      },
      {},
    );
    expect(settings.address).toBe('override:7233');
    expect(settings.origins.address).toBe('TEMPORAL_ADDRESS');
    expect(settings.tls).toMatchObject({
      serverCa: { path: '/other/ca.pem' },
      serverName: 'temporal.internal',
    });
    expect(settings.origins.serverCa).toBe('TEMPORAL_TLS_SERVER_CA_CERT_PATH');
    expect(settings.origins.serverName).toBe(
      `tls.server_name of profile "mtls" in ${file.TEMPORAL_CONFIG_FILE}`,
    );

    const plain = resolveTemporalConnection({ ...file, TEMPORAL_PROFILE: 'prod', TEMPORAL_TLS: 'false' }, {});
    expect(plain.tls).toBe(false);
    expect(plain.origins.tls).toBe('TEMPORAL_TLS');
  });

  it('refuses an unknown profile, a missing file, a broken file and half a key pair, naming each', () => {
    const file = profiles(TWO_PROFILES);
    expect(() => resolveTemporalConnection(file, {}, { profile: 'staging' })).toThrow(
      /--profile names the profile "staging", which .*temporal\.toml does not have \(it has "default", "prod", "mtls"\)/,
    );
    const home = tempDir('no-toml');
    expect(() => resolveTemporalConnection({ HOME: home, TEMPORAL_PROFILE: 'prod' }, {})).toThrow(
      `TEMPORAL_PROFILE names the profile "prod", but there is no temporal.toml at ${home}/.config/temporalio/temporal.toml`,
    );
    expect(() =>
      resolveTemporalConnection({ TEMPORAL_CONFIG_FILE: '/nonexistent/temporal.toml' }, {}),
    ).toThrow(ConfigError);
    expect(() => resolveTemporalConnection(profiles('[profile.default\naddress = 1'), {})).toThrow(
      /is not a valid temporal\.toml/,
    );
    expect(() =>
      resolveTemporalConnection({ HOME: home, TEMPORAL_TLS_CLIENT_CERT_PATH: '/certs/client.pem' }, {}),
    ).toThrow(
      'a client certificate needs both the certificate and its key: TEMPORAL_TLS_CLIENT_CERT_PATH is set, but not TEMPORAL_TLS_CLIENT_KEY_PATH',
    );
  });

  it('reaches the settings through loadSettings only when they are read, with --profile', () => {
    const home = tempDir('lazy-home');
    // A broken temporal.toml does not stop a command that never talks to Temporal.
    const broken = loadSettings({ GOALRUN_HOME: home, ...profiles('[profile.default\naddress = ') });
    expect(broken.home).toBe(home);
    expect(() => broken.temporalAddress).toThrow(/is not a valid temporal\.toml/);

    const file = profiles(TWO_PROFILES);
    const settings = loadSettings({ GOALRUN_HOME: home, ...file }, undefined, { profile: 'prod' });
    expect(settings.temporalAddress).toBe('prod.example:7233');
    expect(settings.namespace).toBe('prod.acct');
  });
});

describe('a plain local setup', () => {
  it('gets what envconfig would answer, without loading envconfig and its TOML parser', () => {
    const { loadClientConfigProfile } =
      require('@temporalio/envconfig') as typeof import('@temporalio/envconfig');
    for (const vars of [
      {},
      { TEMPORAL_ADDRESS: 'h:7233' },
      { TEMPORAL_ADDRESS: 'h:7233', TEMPORAL_NAMESPACE: 'ns', TEMPORAL_CODEC_ENDPOINT: 'http://codec' },
    ] as Record<string, string>[]) {
      const sdk = loadClientConfigProfile({ disableFile: true, overrideEnvVars: vars });
      const ours = resolveTemporalConnection({ HOME: tempDir('plain'), ...vars }, {});
      expect({ address: ours.address, namespace: ours.namespace }).toEqual({
        address: sdk.address ?? 'localhost:7233',
        namespace: sdk.namespace ?? 'default',
      });
      expect([ours.apiKey, ours.tls, ours.metadata]).toEqual([sdk.apiKey, false, sdk.grpcMeta]);
    }
    // In a process of its own (the built module), as a light command runs it.
    const loaded = execFileSync(
      process.execPath,
      [
        '-e',
        `const { resolveTemporalConnection } = require(${JSON.stringify(path.resolve(__dirname, '../../dist/worker/temporal-connection.js'))});
         resolveTemporalConnection({ HOME: ${JSON.stringify(tempDir('plain'))}, TEMPORAL_ADDRESS: 'h:7233' }, {});
         console.log(Object.keys(require.cache).some((file) => /envconfig|smol-toml/.test(file)));`,
      ],
      { encoding: 'utf8' },
    );
    expect(loaded.trim()).toBe('false');
  });
});

describe('the API key', () => {
  it('reaches the connection options, turns TLS on, and is redacted; descriptions only say it is set', () => {
    const home = tempDir('key-home');
    const env = {
      GOALRUN_HOME: home,
      HOME: home,
      TEMPORAL_ADDRESS: 'ns.acct.tmprl.cloud:7233',
      TEMPORAL_API_KEY: API_KEY,
    };
    const settings = loadSettings(env);
    const options = connectOptions(settings.temporal);
    expect(options).toEqual({ address: 'ns.acct.tmprl.cloud:7233', apiKey: API_KEY, tls: {} });
    // Tool output and stored text are scrubbed of it like the provider keys.
    expect(knownSecrets(settings)).toContain(API_KEY);
    const described = describeConnectionSettings(settings.temporal);
    expect(described).toContain('API key set (TEMPORAL_API_KEY)');
    expect(described).not.toContain(API_KEY);
  });
});

describe('connectOptions', () => {
  it('reads the certificate files, and names the setting of one it cannot read', () => {
    const dir = tempDir('pem');
    for (const name of ['ca.pem', 'client.pem', 'client.key'])
      fs.writeFileSync(path.join(dir, name), `PEM ${name}`);
    const env = {
      HOME: dir,
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: path.join(dir, 'ca.pem'),
      TEMPORAL_TLS_CLIENT_CERT_PATH: path.join(dir, 'client.pem'),
      TEMPORAL_TLS_CLIENT_KEY_PATH: path.join(dir, 'client.key'),
      TEMPORAL_TLS_SERVER_NAME: 'temporal.internal',
    };
    const options = connectOptions(resolveTemporalConnection(env, {}));
    expect(options.tls).toEqual({
      serverNameOverride: 'temporal.internal',
      serverRootCACertificate: Buffer.from('PEM ca.pem'),
      clientCertPair: { crt: Buffer.from('PEM client.pem'), key: Buffer.from('PEM client.key') },
    });
    const missing = resolveTemporalConnection(
      { ...env, TEMPORAL_TLS_CLIENT_KEY_PATH: path.join(dir, 'gone.key') },
      {},
    );
    expect(() => connectOptions(missing)).toThrow(
      `cannot read ${path.join(dir, 'gone.key')} (TEMPORAL_TLS_CLIENT_KEY_PATH): no such file`,
    );
  });
});
