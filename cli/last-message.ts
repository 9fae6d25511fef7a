/** `run --output-last-message FILE` (as `codex exec` has it): the goal's final summary, for scripts. */
import fs from 'node:fs';
import path from 'node:path';
import { ConfigError } from '../core/errors';
import type { CliContext } from './context';
import { loadStatus } from './goal-status';
import { notice } from './output';

/**
 * The absolute path of a file that can be written, its directory's links resolved now, or a
 * ConfigError naming why not. The file may lie in the workspace, which is the model's: by the time
 * the goal ends the model may have made it (or a directory above it) a link to a host file.
 */
export function writableFile(given: string): string {
  const resolved = path.resolve(given);
  let dir: string;
  try {
    dir = fs.realpathSync(path.dirname(resolved));
    fs.accessSync(dir, fs.constants.W_OK);
  } catch {
    throw new ConfigError(
      `--output-last-message: cannot write into ${path.dirname(resolved)} (does it exist?)`,
    );
  }
  const file = path.join(dir, path.basename(resolved));
  if (fs.existsSync(file) && fs.statSync(file).isDirectory()) {
    throw new ConfigError(`--output-last-message: ${file} is a directory`);
  }
  return file;
}

/** Opening flags that never follow a link at the file itself and never truncate before the check. */
const WRITE_FLAGS =
  fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK;

/**
 * Writes `text` to `file` (a path writableFile resolved) only if what opens there is that file: a
 * link at the file is refused (O_NOFOLLOW), and so is a directory above it swapped for a link since.
 */
function writeNoFollow(file: string, text: string): void {
  const fd = fs.openSync(file, WRITE_FLAGS, 0o644);
  try {
    let opened: string | null = null;
    try {
      opened = fs.readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      // No /proc to ask: O_NOFOLLOW has covered the file itself.
    }
    if (opened !== null && opened !== file) throw new Error(`it leads to ${opened} now (a link)`);
    if (!fs.fstatSync(fd).isFile()) throw new Error('it is not a regular file');
    fs.ftruncateSync(fd, 0);
    fs.writeSync(fd, text);
  } finally {
    fs.closeSync(fd);
  }
}

/** Writes the goal's final message to the file: its result, else its finish summary, else how it stopped. */
export async function writeLastMessage(context: CliContext, sessionId: string, file: string): Promise<void> {
  const view = await loadStatus(context, sessionId);
  // With --output-schema, the last message is the result (JSON), as `codex exec` writes it.
  const text =
    view.result !== undefined
      ? JSON.stringify(view.result)
      : (view.finishSummary ?? `goal ${view.status}${view.reason ? `: ${view.reason}` : ''}`);
  try {
    writeNoFollow(file, `${text}\n`);
  } catch (err) {
    const why =
      (err as NodeJS.ErrnoException).code === 'ELOOP' ? 'it is a symbolic link now' : (err as Error).message;
    notice(`could not write the last message to ${file}: ${why}; goalrun writes through no link`);
  }
}
