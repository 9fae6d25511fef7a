/**
 * Runs store code in separate Node processes, the way separate goalrun commands open the store. The
 * children load the compiled store from dist/ (`npm run build` first, as for the CLI tests).
 */
import { type SpawnOptions, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/** The compiled store modules. */
export const DIST_STORE = path.resolve(__dirname, '../../dist/store');

/** What a child printed and how it ended; `result` is the JSON of its last stdout line. */
export interface ChildRun<T> {
  code: number | null;
  stderr: string;
  result: T;
}

/**
 * Runs `body` (JavaScript; `store` is the dist/store directory, `home` the data directory, `arg` the
 * JSON-able argument) in a new process, and parses the value it passes to `done(value)`.
 */
export function runStoreChild<T>(
  body: string,
  home: string,
  arg: unknown = null,
  options: Pick<SpawnOptions, 'uid' | 'gid'> & { distStore?: string; path?: string } = {},
): Promise<ChildRun<T>> {
  const distStore = options.distStore ?? DIST_STORE;
  if (!fs.existsSync(path.join(DIST_STORE, 'open.js'))) {
    throw new Error(`${DIST_STORE}/open.js is missing: run \`npm run build\` first`);
  }
  const script = `
    const store = ${JSON.stringify(distStore)};
    const home = ${JSON.stringify(home)};
    const arg = ${JSON.stringify(arg)};
    const done = (value) => { process.stdout.write('\\n' + JSON.stringify(value) + '\\n'); process.exit(0); };
    (async () => { ${body} })().catch((error) => {
      process.stderr.write('child failed: ' + (error && error.stack || error) + '\\n');
      process.exit(1);
    });`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', script], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: options.path ?? process.env.PATH ?? '/usr/bin:/bin' },
      cwd: '/',
      uid: options.uid,
      gid: options.gid,
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr!.on('data', (chunk) => {
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => {
      const last = stdout.trim().split('\n').pop() ?? '';
      let result: T;
      try {
        result = JSON.parse(last) as T;
      } catch {
        result = undefined as T;
      }
      resolve({ code, stderr, result });
    });
  });
}

/** Pids of the processes whose command line names `dataDir`: only a postmaster keeps its `-D` argument. */
export function postmastersOf(dataDir: string): number[] {
  const pids: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const zombie = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z';
      if (!zombie && cmdline.includes(dataDir)) pids.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return pids;
}
