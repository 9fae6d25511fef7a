/**
 * Which build this is: the package version and a hash of each workflow bundle, written to
 * dist/build-info.json when the bundles are built (bundle.ts) and read by `goalrun --version` and the
 * worker's start line. Two builds with the same bundle hash run the same workflow code, whatever
 * their version says; that is what decides whether a goal in flight can move between them.
 * Free of the SDK, so `--version` stays fast.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** The file beside the bundles in dist/. */
export const BUILD_INFO_FILE = 'build-info.json';
/** How many hex characters of a bundle hash a one-line display shows. */
export const SHORT_HASH_LENGTH = 12;

/** What dist/build-info.json holds. */
export interface BuildInfo {
  version: string;
  /** sha256 (hex) of dist/workflow-bundle.js, the bundle of workers that do not encrypt payloads. */
  workflowBundleSha256: string;
  /** sha256 (hex) of dist/workflow-bundle-encrypted.js, the bundle of workers with GOALRUN_PAYLOAD_KEYS. */
  encryptedWorkflowBundleSha256: string;
  builtAt: string;
}

/** The sha256 of a bundle's code, in hex. */
export function bundleHash(code: string): string {
  return createHash('sha256').update(code).digest('hex');
}

/** The package root: the folder that holds package.json (worker/.. from source, dist/worker/../.. built). */
function packageRoot(): string {
  const candidates = [path.resolve(__dirname, '..'), path.resolve(__dirname, '..', '..')];
  return candidates.find((dir) => fs.existsSync(path.join(dir, 'package.json'))) ?? candidates[0];
}

/** The version in package.json. */
export function packageVersion(): string {
  const pkg = JSON.parse(fs.readFileSync(path.join(packageRoot(), 'package.json'), 'utf8')) as {
    version: string;
  };
  return pkg.version;
}

/** Where build-info.json is written: dist/, beside the bundles. */
export function buildInfoPath(): string {
  return path.join(packageRoot(), 'dist', BUILD_INFO_FILE);
}

/** Writes dist/build-info.json for the bundles just written. */
export function writeBuildInfo(hashes: { plain: string; encrypted: string }): BuildInfo {
  const info: BuildInfo = {
    version: packageVersion(),
    workflowBundleSha256: hashes.plain,
    encryptedWorkflowBundleSha256: hashes.encrypted,
    builtAt: new Date().toISOString(),
  };
  fs.writeFileSync(buildInfoPath(), `${JSON.stringify(info, null, 2)}\n`);
  return info;
}

/** dist/build-info.json, or undefined when the bundles were never built. */
export function readBuildInfo(): BuildInfo | undefined {
  try {
    return JSON.parse(fs.readFileSync(buildInfoPath(), 'utf8')) as BuildInfo;
  } catch {
    return undefined;
  }
}

/** What `goalrun --version` prints: the version, then each bundle's hash. */
export function versionText(): string {
  const info = readBuildInfo();
  const version = info?.version ?? packageVersion();
  if (!info) return `goalrun ${version} (workflow bundle not built: run npm run build)`;
  return [
    `goalrun ${version}`,
    `workflow bundle sha256:${info.workflowBundleSha256.slice(0, SHORT_HASH_LENGTH)}`,
    `encrypted-payload workflow bundle sha256:${info.encryptedWorkflowBundleSha256.slice(0, SHORT_HASH_LENGTH)}`,
  ].join('\n');
}
