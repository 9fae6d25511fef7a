/**
 * Bundles the workflow code once at build time, so a worker starts in a second instead of
 * re-running webpack on every start. Run as `node dist/worker/bundle.js` (npm run build does).
 * Two bundles of the same workflows: one with the SDK's failure converter, and one for workers that
 * encrypt payloads, whose workflows put failure messages into (encrypted) payloads.
 */
import fs from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { bundleHash, writeBuildInfo } from './build-info';
import { slimSourceMap } from './bundle-source-map';
import { encryptedFailureConverterPath } from './data-converter';

/**
 * The workflow interceptors every bundle carries (workflows/tracing-interceptors.ts). Resolved when a
 * bundle is made, not on import: a test that imports the worker from source has no compiled file to find.
 */
export function workflowInterceptorsPath(): string {
  return require.resolve('../workflows/tracing-interceptors');
}

/**
 * Modules the bundle evaluates once, before the SDK freezes the isolate's globals: the one that turns
 * off the SDK's per-promise stack capture (workflows/promise-stacks.ts). Resolved like the interceptors.
 */
export function workflowPreloadModules(): string[] {
  return [require.resolve('../workflows/promise-stacks')];
}

/** Where the prebuilt bundle lives: beside the compiled folders in dist/. */
export const BUNDLE_FILE = 'workflow-bundle.js';
/** The bundle of workers that encrypt payloads (see encrypted-failure-converter.ts). */
export const ENCRYPTED_BUNDLE_FILE = 'workflow-bundle-encrypted.js';

/**
 * A bundle to run instead of the prebuilt one (a path): how a test runs a second build of the workflow
 * code beside the first, as a deploy does. Not for production use.
 */
export const WORKFLOW_BUNDLE_ENV = 'GOALRUN_WORKFLOW_BUNDLE';

/** The prebuilt bundle's path (of the encrypting workers' bundle with `encrypted`), if one was built. */
export function findWorkflowBundle(encrypted = false): string | undefined {
  const chosen = process.env[WORKFLOW_BUNDLE_ENV];
  if (chosen) return path.resolve(chosen);
  const file = encrypted ? ENCRYPTED_BUNDLE_FILE : BUNDLE_FILE;
  const candidates = [path.resolve(__dirname, '..', file), path.resolve(__dirname, '..', 'dist', file)];
  return candidates.find((candidate) => fs.existsSync(candidate));
}

/** Writes one bundle (its source map in a file beside it) and returns the sha256 of its code. */
async function writeBundle(file: string, failureConverterPath?: string): Promise<string> {
  const bundled = await bundleWorkflowCode({
    workflowsPath: require.resolve('../workflows'),
    // Always in: a worker with traces off makes their sink silent, so tracing changes no build id.
    workflowInterceptorModules: [workflowInterceptorsPath()],
    preloadModules: workflowPreloadModules(),
    failureConverterPath,
    logger: { log() {}, trace() {}, debug() {}, info() {}, warn: console.warn, error: console.error },
  });
  const { code, map } = slimSourceMap(bundled.code);
  const target = path.resolve(__dirname, '..', file);
  fs.writeFileSync(target, code);
  fs.writeFileSync(`${target}.map`, map);
  console.log(
    `workflow bundle written to ${path.relative(process.cwd(), target)} (${code.length} bytes; its source map beside it, ${map.length} bytes)`,
  );
  return bundleHash(code);
}

async function main(): Promise<void> {
  const plain = await writeBundle(BUNDLE_FILE);
  const encrypted = await writeBundle(ENCRYPTED_BUNDLE_FILE, encryptedFailureConverterPath());
  const info = writeBuildInfo({ plain, encrypted });
  console.log(`build info written to dist/build-info.json (goalrun ${info.version})`);
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
