/**
 * Bundles the workflow code once at build time, so a worker starts in a second instead of
 * re-running webpack on every start. Run as `node dist/worker/bundle.js` (npm run build does).
 */
import fs from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';

/** Where the prebuilt bundle lives: beside the compiled folders in dist/. */
export const BUNDLE_FILE = 'workflow-bundle.js';

/** The prebuilt bundle's path, if one was built. */
export function findWorkflowBundle(): string | undefined {
  const candidates = [
    path.resolve(__dirname, '..', BUNDLE_FILE),
    path.resolve(__dirname, '..', 'dist', BUNDLE_FILE),
  ];
  return candidates.find((candidate) => fs.existsSync(candidate));
}

async function main(): Promise<void> {
  const { code } = await bundleWorkflowCode({
    workflowsPath: require.resolve('../workflows'),
    logger: { log() {}, trace() {}, debug() {}, info() {}, warn: console.warn, error: console.error },
  });
  const target = path.resolve(__dirname, '..', BUNDLE_FILE);
  fs.writeFileSync(target, code);
  console.log(`workflow bundle written to ${path.relative(process.cwd(), target)} (${code.length} bytes)`);
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
