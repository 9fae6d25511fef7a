/**
 * Vitest global setup of the upgrade test: builds the previous release once (scripts/release-build.js,
 * cached by commit outside the repo) and provides its directory as `releaseDir`.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { TestProject } from 'vitest/node';

/**
 * The release whose goals must finish on this build (0.2.0; tag v0.2.0 points at it). Kept in a JSON
 * file so that .ci/run can build it in the background while the suite runs.
 */
export const PREVIOUS_RELEASE: { version: string; commit: string } = JSON.parse(
  fs.readFileSync(path.join(__dirname, 'previous-release.json'), 'utf8'),
);

declare module 'vitest' {
  export interface ProvidedContext {
    releaseDir: string;
    releaseVersion: string;
  }
}

export default function setup(project: TestProject): void {
  const script = path.resolve(__dirname, '../../scripts/release-build.js');
  const started = Date.now();
  const dir = execFileSync(process.execPath, [script, PREVIOUS_RELEASE.commit], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  }).trim();
  console.log(
    `release ${PREVIOUS_RELEASE.version} build ready in ${((Date.now() - started) / 1000).toFixed(0)} s: ${dir}`,
  );
  project.provide('releaseDir', dir);
  project.provide('releaseVersion', PREVIOUS_RELEASE.version);
}
