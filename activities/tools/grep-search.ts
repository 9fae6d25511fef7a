/**
 * Where grep's pattern runs: never on the worker's event loop, where one catastrophic pattern
 * (`(a+)+$` on a long line) would stall every activity of the worker. ripgrep runs as a child
 * process with a time limit; where it is missing, a Node child process runs the same search with a
 * JavaScript RegExp under the same limit. Both are killed on timeout and on cancellation.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { killProcessGroup } from './process-group';

/** What to search. */
export interface GrepQuery {
  pattern: string;
  ignoreCase: boolean;
  /** Only files matching this glob (on names, or on paths relative to the target when it has a `/`). */
  glob?: string;
  /** Directory names not descended into (.git, node_modules unless the glob names them). */
  skipDirs: readonly string[];
  /** Real path of the file or directory searched. */
  target: string;
  targetIsFile: boolean;
  maxFileBytes: number;
  /** Matching lines to keep. */
  maxResults: number;
  /** Stop counting (and kill the search) after this many matching lines. */
  countCap: number;
  timeoutMs: number;
  signal: AbortSignal;
  heartbeat: () => void;
}

/** One matching line. */
export interface GrepMatch {
  /** Path relative to the target directory (`/`-separated); empty when the target is a file. */
  file: string;
  line: number;
  text: string;
  /** Index (UTF-16) of the first match in `text`, to clip long lines around it. */
  matchStart: number;
}

/** What a search found. */
export interface GrepResult {
  matches: GrepMatch[];
  /** Matching lines counted (at least this many when `capped`). */
  total: number;
  capped: boolean;
  timedOut: boolean;
  /** The searcher's own complaint (a pattern it cannot parse). */
  error?: string;
}

/** How often a running search reports liveness. */
const HEARTBEAT_INTERVAL_MS = 1_000;
/** A killed searcher gets this long to die after SIGTERM. */
const KILL_GRACE_MS = 500;
/** Longest stderr kept from a searcher. */
const MAX_STDERR_CHARS = 2_000;

interface SearchProcess {
  file: string;
  args: string[];
  cwd: string;
  /** Turns one line of the searcher's stdout into a match, an error, or nothing. */
  parse(line: string): GrepMatch | { error: string } | undefined;
  /** The searcher's exit code for "no matches" or "matches" (anything else with stderr is an error). */
  okCodes: readonly number[];
}

/** Runs a searcher process, collecting matches until it ends, times out, is cancelled or hits the cap. */
async function runSearch(search: SearchProcess, query: GrepQuery): Promise<GrepResult> {
  query.signal.throwIfAborted();
  const child = spawn(search.file, search.args, {
    cwd: search.cwd,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8' },
  });
  const result: GrepResult = { matches: [], total: 0, capped: false, timedOut: false };
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    if (stderr.length < MAX_STDERR_CHARS) stderr += chunk.toString('utf8');
  });
  const spawned = await new Promise<Error | undefined>((resolve) => {
    child.once('spawn', () => resolve(undefined));
    child.once('error', resolve);
  });
  if (spawned) return { ...result, error: `cannot start ${search.file}: ${spawned.message}` };
  const pgid = child.pid as number;
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  let stopped: 'timeout' | 'cancel' | 'cap' | undefined;
  const stop = (reason: 'timeout' | 'cancel' | 'cap') => {
    if (stopped) return;
    stopped = reason;
    void killProcessGroup(pgid, KILL_GRACE_MS);
  };
  const timer = setTimeout(() => stop('timeout'), query.timeoutMs);
  const onAbort = () => stop('cancel');
  query.signal.addEventListener('abort', onAbort, { once: true });
  const beat = setInterval(() => {
    try {
      query.heartbeat();
    } catch {
      // Temporal notices missing heartbeats by itself.
    }
  }, HEARTBEAT_INTERVAL_MS);
  try {
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream, crlfDelay: Infinity });
    for await (const line of lines) {
      if (stopped) continue;
      const parsed = search.parse(line);
      if (!parsed) continue;
      if ('error' in parsed) {
        result.error ??= parsed.error;
        continue;
      }
      result.total += 1;
      if (result.matches.length < query.maxResults) result.matches.push(parsed);
      if (result.total >= query.countCap) {
        result.capped = true;
        stop('cap');
      }
    }
    const code = await exited;
    if (stopped === 'cancel') query.signal.throwIfAborted();
    result.timedOut = stopped === 'timeout';
    if (!stopped && !search.okCodes.includes(code ?? -1)) {
      result.error ??= stderr.trim() || `search failed with exit code ${code}`;
    }
    return result;
  } finally {
    clearTimeout(timer);
    clearInterval(beat);
    query.signal.removeEventListener('abort', onAbort);
    if (!stopped) await killProcessGroup(pgid, KILL_GRACE_MS);
  }
}

/** UTF-16 index of a UTF-8 byte offset in `text`. */
function charIndexOfByte(text: string, byteOffset: number): number {
  return Buffer.from(text, 'utf8').subarray(0, byteOffset).toString('utf8').length;
}

function stripLineEnd(text: string): string {
  return text.replace(/\r?\n$/, '');
}

interface RipgrepEvent {
  type: string;
  data?: {
    path?: { text?: string };
    lines?: { text?: string };
    line_number?: number;
    submatches?: Array<{ start: number }>;
  };
}

/** Searches with ripgrep (`--engine auto`: Rust regex syntax, PCRE2 for lookaround and backreferences). */
export function searchWithRipgrep(rgPath: string, query: GrepQuery): Promise<GrepResult> {
  // --sort path: results in a stable order (and one thread, which also bounds the CPU it takes).
  const args = [
    '--json',
    '--no-config',
    '--no-messages',
    '--hidden',
    '--no-ignore',
    '--sort',
    'path',
    '--engine',
    'auto',
  ];
  args.push('--max-filesize', String(query.maxFileBytes));
  if (query.ignoreCase) args.push('--ignore-case');
  if (!query.targetIsFile) {
    for (const dir of query.skipDirs) args.push('--glob', `!${dir}`);
    if (query.glob !== undefined) args.push('--glob', query.glob);
  }
  args.push('--regexp', query.pattern, '--', query.targetIsFile ? query.target : '.');
  return runSearch(
    {
      file: rgPath,
      args,
      cwd: query.targetIsFile ? '/' : query.target,
      okCodes: [0, 1],
      parse(line) {
        let event: RipgrepEvent;
        try {
          event = JSON.parse(line) as RipgrepEvent;
        } catch {
          return undefined;
        }
        if (event.type !== 'match' || !event.data) return undefined;
        // Paths and lines that are not UTF-8 come as base64 `bytes`; such files are skipped.
        const rawText = event.data.lines?.text;
        const rawPath = event.data.path?.text;
        if (rawText === undefined || rawPath === undefined) return undefined;
        const text = stripLineEnd(rawText);
        const file = query.targetIsFile ? '' : rawPath.replace(/^\.\//, '');
        const start = event.data.submatches?.[0]?.start ?? 0;
        return { file, line: event.data.line_number ?? 0, text, matchStart: charIndexOfByte(text, start) };
      },
    },
    query,
  );
}

/**
 * The fallback searcher, run by `node -e` in a child process: walks the target without following
 * symlinks, skips binary and oversized files, and prints one JSON line per matching line.
 */
const NODE_SEARCHER = String.raw`
const fs = require('node:fs');
const path = require('node:path');
const q = JSON.parse(process.argv[1]);
let matcher;
try { matcher = new RegExp(q.pattern, q.flags + 'u'); } catch { try { matcher = new RegExp(q.pattern, q.flags); } catch (e) { console.log(JSON.stringify({ error: String(e.message) })); process.exit(2); } }
const glob = q.glob === null ? null : new RegExp(q.glob.source, q.glob.flags);
const skip = new Set(q.skipDirs);
const out = (o) => process.stdout.write(JSON.stringify(o) + '\n');
function searchFile(abs, rel) {
  let content;
  try { if (fs.statSync(abs).size > q.maxFileBytes) return; content = fs.readFileSync(abs); } catch { return; }
  if (content.includes(0)) return;
  const lines = content.toString('utf8').split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].endsWith('\r') ? lines[i].slice(0, -1) : lines[i];
    const at = line.search(matcher);
    if (at >= 0) out({ file: rel, line: i + 1, text: line, matchStart: at });
  }
}
if (q.targetIsFile) { searchFile(q.target, ''); }
else {
  // Depth first, names ascending, so files come out in path order as with rg --sort path.
  const stack = [{ rel: '', dir: true }];
  while (stack.length > 0) {
    const item = stack.pop();
    if (!item.dir) {
      if (glob && !glob.test(q.globByName ? path.posix.basename(item.rel) : item.rel)) continue;
      searchFile(path.join(q.target, item.rel), item.rel);
      continue;
    }
    let entries;
    try { entries = fs.readdirSync(path.join(q.target, item.rel), { withFileTypes: true }); } catch { continue; }
    entries.sort((a, b) => (a.name < b.name ? 1 : a.name > b.name ? -1 : 0));
    for (const entry of entries) {
      const rel = item.rel === '' ? entry.name : item.rel + '/' + entry.name;
      if (entry.isDirectory()) { if (!skip.has(entry.name)) stack.push({ rel, dir: true }); }
      else if (entry.isFile()) stack.push({ rel, dir: false });
    }
  }
}
`;

/** Searches with a JavaScript RegExp in a Node child process (for hosts without ripgrep). */
export function searchWithNode(query: GrepQuery, globMatcher: RegExp | undefined): Promise<GrepResult> {
  const spec = {
    pattern: query.pattern,
    flags: query.ignoreCase ? 'i' : '',
    glob: globMatcher ? { source: globMatcher.source, flags: globMatcher.flags } : null,
    globByName: query.glob !== undefined && !query.glob.includes('/'),
    skipDirs: query.skipDirs,
    target: query.target,
    targetIsFile: query.targetIsFile,
    maxFileBytes: query.maxFileBytes,
  };
  return runSearch(
    {
      file: process.execPath,
      args: ['-e', NODE_SEARCHER, JSON.stringify(spec)],
      cwd: '/',
      okCodes: [0],
      parse(line) {
        try {
          const parsed = JSON.parse(line) as GrepMatch | { error: string };
          return parsed;
        } catch {
          return undefined;
        }
      },
    },
    query,
  );
}
