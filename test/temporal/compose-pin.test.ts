/**
 * The compose file pins one Temporal server version, and that is the version the cluster test builds
 * (scripts/ensure-temporal-server.sh reads it from the compose file) and runs its setup with.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const REPO = path.resolve(__dirname, '../..');
const compose = fs.readFileSync(path.join(REPO, 'docker-compose.yml'), 'utf8');

describe('the Temporal version pin', () => {
  it('is one version for the server, its admin tools and the schema setup', () => {
    const pins = [...compose.matchAll(/temporalio\/(server|admin-tools):\$\{TEMPORAL_VERSION:-([0-9.]+)\}/g)];
    expect(pins.map((pin) => pin[1]).sort()).toEqual(['admin-tools', 'admin-tools', 'server']);
    expect(new Set(pins.map((pin) => pin[2])).size).toBe(1);
  });

  it('is what the server build script builds', () => {
    const version = /temporalio\/server:\$\{TEMPORAL_VERSION:-([0-9.]+)\}/.exec(compose)?.[1];
    // The script's own extraction, run on the compose file (a cached build is not needed for it).
    const script = fs.readFileSync(path.join(REPO, 'scripts/ensure-temporal-server.sh'), 'utf8');
    const sed = /pinned="\$\(sed -n '([^']+)'/.exec(script)?.[1];
    expect(sed).toBeTruthy();
    const extracted = execFileSync('sed', ['-n', sed as string, path.join(REPO, 'docker-compose.yml')], {
      encoding: 'utf8',
    }).trim();
    expect(extracted).toBe(version);
  });

  it('gives the schema setup to compose through the shared script', () => {
    expect(compose).toContain('./temporal/setup-schema.sh:/setup-schema.sh:ro');
    expect(compose).toContain('entrypoint: ["/bin/sh", "/setup-schema.sh"]');
  });
});
