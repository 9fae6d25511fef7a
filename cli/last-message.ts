/** `run --output-last-message FILE` (as `codex exec` has it): the goal's final summary, for scripts. */
import fs from 'node:fs';
import path from 'node:path';
import { ConfigError } from '../core/errors';
import type { CliContext } from './context';
import { loadStatus } from './goal-status';
import { notice } from './output';

/** The absolute path of a file that can be written, or a ConfigError naming why not. */
export function writableFile(given: string): string {
  const file = path.resolve(given);
  const dir = path.dirname(file);
  try {
    fs.accessSync(dir, fs.constants.W_OK);
  } catch {
    throw new ConfigError(`--output-last-message: cannot write into ${dir} (does it exist?)`);
  }
  if (fs.existsSync(file) && fs.statSync(file).isDirectory()) {
    throw new ConfigError(`--output-last-message: ${file} is a directory`);
  }
  return file;
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
    fs.writeFileSync(file, `${text}\n`);
  } catch (err) {
    notice(`could not write the last message to ${file}: ${(err as Error).message}`);
  }
}
