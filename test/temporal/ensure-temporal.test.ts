/**
 * The order in which scripts/ensure-temporal.js looks for or installs the `temporal` binary, and what
 * it says. The network, the SDK's download and Go are stubbed at their boundary: the real download
 * cannot run on a machine without internet, and a real Go build takes minutes.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../support/cli';

interface Boundaries {
  sdkCached(): string | null;
  probeDownload(): Promise<{ ok: boolean; reason?: string }>;
  sdkDownload(): Promise<string>;
  hasGo(): boolean;
  goInstall(binDir: string): Promise<string>;
}
type Ensure = (
  deps: { env: NodeJS.ProcessEnv; log: (line: string) => void } & Boundaries,
) => Promise<{ path: string; source: string }>;

const { ensureTemporal } = createRequire(import.meta.url)('../../scripts/ensure-temporal.js') as {
  ensureTemporal: Ensure;
};

/** A fake executable at `file`. */
function fakeBinary(file: string): string {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, '#!/bin/sh\necho temporal version 0.0.0\n', { mode: 0o755 });
  return file;
}

/** A run of ensureTemporal with stubbed boundaries that record which were called. */
function setup(stubs: Partial<Boundaries> = {}) {
  const dir = tempDir('ensure-temporal');
  const calls: string[] = [];
  const logs: string[] = [];
  const env: NodeJS.ProcessEnv = {
    HOME: dir,
    GOALRUN_CACHE_DIR: path.join(dir, 'cache'),
    PATH: path.join(dir, 'empty-path'),
  };
  const boundaries: Boundaries = {
    sdkCached: () => {
      calls.push('sdkCached');
      return stubs.sdkCached ? stubs.sdkCached() : null;
    },
    probeDownload: async () => {
      calls.push('probeDownload');
      return stubs.probeDownload
        ? stubs.probeDownload()
        : { ok: false, reason: 'temporal.download is not reachable (stub)' };
    },
    sdkDownload: async () => {
      calls.push('sdkDownload');
      if (!stubs.sdkDownload) throw new Error('no download in this test');
      return stubs.sdkDownload();
    },
    hasGo: () => {
      calls.push('hasGo');
      return stubs.hasGo ? stubs.hasGo() : false;
    },
    goInstall: async (binDir) => {
      calls.push('goInstall');
      if (!stubs.goInstall) throw new Error('no go in this test');
      return stubs.goInstall(binDir);
    },
  };
  const run = () => ensureTemporal({ env, log: (line) => logs.push(line), ...boundaries });
  return { dir, env, calls, logs, run, target: path.join(dir, 'cache', 'bin', 'temporal') };
}

describe('ensure-temporal', () => {
  it('takes TEMPORAL_CLI_PATH first and touches nothing else', async () => {
    const t = setup();
    t.env.TEMPORAL_CLI_PATH = fakeBinary(path.join(t.dir, 'explicit', 'temporal'));
    fakeBinary(t.target);
    expect(await t.run()).toEqual({ path: t.env.TEMPORAL_CLI_PATH, source: 'explicit' });
    expect(t.calls).toEqual([]);
    expect(t.logs).toEqual([`using ${t.env.TEMPORAL_CLI_PATH} (source: TEMPORAL_CLI_PATH)`]);
  });

  it('warns about a TEMPORAL_CLI_PATH that is not executable, then uses PATH', async () => {
    const t = setup();
    t.env.TEMPORAL_CLI_PATH = path.join(t.dir, 'missing');
    const onPath = fakeBinary(path.join(t.dir, 'empty-path', 'temporal'));
    expect(await t.run()).toEqual({ path: onPath, source: 'path' });
    expect(t.logs[0]).toMatch(/TEMPORAL_CLI_PATH=.*missing is not an executable file; looking elsewhere/);
    expect(t.logs[1]).toBe(`using ${onPath} (source: PATH)`);
  });

  it('uses the goalrun cache before any download', async () => {
    const t = setup({ probeDownload: async () => ({ ok: true }) });
    fakeBinary(t.target);
    expect(await t.run()).toEqual({ path: t.target, source: 'cache' });
    expect(t.calls).toEqual([]);
  });

  it("copies the SDK's cached download into the goalrun cache without the network", async () => {
    const t = setup({
      sdkCached: () => fakeBinary(path.join(t.dir, 'tmp', 'temporal-sdk-typescript-1.24.0')),
    });
    expect(await t.run()).toEqual({ path: t.target, source: 'sdkCache' });
    expect(t.calls).toEqual(['sdkCached']);
    expect(fs.statSync(t.target).mode & 0o111).not.toBe(0);
    expect(t.logs.at(-1)).toBe(`using ${t.target} (source: the Temporal SDK's download cache)`);
  });

  it('downloads through the SDK where there is internet, and does not build with Go', async () => {
    const t = setup({
      probeDownload: async () => ({ ok: true }),
      sdkDownload: async () => fakeBinary(path.join(t.dir, 'tmp', 'temporal-sdk-typescript-1.24.0')),
      hasGo: () => true,
    });
    expect(await t.run()).toEqual({ path: t.target, source: 'download' });
    expect(t.calls).toEqual(['sdkCached', 'probeDownload', 'sdkDownload']);
    expect(t.logs.at(-1)).toMatch(
      /\(source: the official download \(temporal\.download, as the Temporal SDK's test/,
    );
  });

  it('falls back to go install when temporal.download does not answer, saying why', async () => {
    const t = setup({
      probeDownload: async () => ({
        ok: false,
        reason: 'temporal.download is not reachable (fetch failed: ENOTFOUND)',
      }),
      hasGo: () => true,
      goInstall: async (binDir) => fakeBinary(path.join(binDir, 'temporal')),
    });
    expect(await t.run()).toEqual({ path: t.target, source: 'go' });
    expect(t.calls).toEqual(['sdkCached', 'probeDownload', 'hasGo', 'goInstall']);
    expect(t.logs).toEqual([
      'temporal.download is not reachable (fetch failed: ENOTFOUND); trying go install through the Go module proxy',
      `using ${t.target} (source: go install through the Go module proxy)`,
    ]);
  });

  it('falls back to go install when the download itself fails', async () => {
    const t = setup({
      probeDownload: async () => ({ ok: true }),
      sdkDownload: async () => {
        throw new Error('connection reset');
      },
      hasGo: () => true,
      goInstall: async (binDir) => fakeBinary(path.join(binDir, 'temporal')),
    });
    expect((await t.run()).source).toBe('go');
    expect(t.calls).toEqual(['sdkCached', 'probeDownload', 'sdkDownload', 'hasGo', 'goInstall']);
    expect(t.logs[0]).toBe("the SDK's download failed (connection reset); trying go install");
  });

  it('fails with every reason and what to do when there is neither internet nor Go', async () => {
    const t = setup();
    const error = await t.run().catch((err: Error) => err);
    expect(error).toBeInstanceOf(Error);
    const message = (error as Error).message;
    expect(message).toContain(`no temporal binary found (TEMPORAL_CLI_PATH, PATH, ${t.target})`);
    expect(message).toContain("temporal.download is not reachable (stub); 'go' is not installed");
    expect(message).toMatch(/With internet, rerun this script/);
    expect(message).toMatch(/install Go >= 1\.25/);
    expect(message).toMatch(/set TEMPORAL_CLI_PATH=\/path\/to\/temporal/);
    expect(t.calls).toEqual(['sdkCached', 'probeDownload', 'hasGo']);
  });
});
