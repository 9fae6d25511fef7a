/** `goalrun --version` names the release and the workflow bundles it runs (issue 21: releases are named). */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnv, runCli } from '../support/cli';

const ROOT = path.resolve(__dirname, '../..');
const sha256 = (file: string) =>
  createHash('sha256')
    .update(fs.readFileSync(path.join(ROOT, file)))
    .digest('hex');

describe('goalrun --version', () => {
  it("prints package.json's version and the sha256 of both workflow bundles, fast", async () => {
    const { version } = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    const result = await runCli(['--version'], cliEnv({}));
    expect(result.code, result.stderr).toBe(0);
    const [first, plain, encrypted] = result.stdout.trim().split('\n');
    expect(first).toBe(`goalrun ${version}`);
    expect(plain).toBe(`workflow bundle sha256:${sha256('dist/workflow-bundle.js').slice(0, 12)}`);
    expect(encrypted).toBe(
      `encrypted-payload workflow bundle sha256:${sha256('dist/workflow-bundle-encrypted.js').slice(0, 12)}`,
    );
    const info = JSON.parse(fs.readFileSync(path.join(ROOT, 'dist/build-info.json'), 'utf8'));
    expect(info.workflowBundleSha256).toBe(sha256('dist/workflow-bundle.js'));
  });
});
