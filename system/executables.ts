/** Executables: whether a file is one, and finding one on PATH as a shell would (but safer). */
import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';

/** Whether `file` is a regular file this process may execute. */
export function isExecutableFile(file: string): boolean {
  try {
    if (!statSync(file).isFile()) return false;
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The absolute path of the first executable `name` in the directories of `env.PATH`, or null.
 * An empty PATH entry (the current directory to a shell) is never searched: the working directory
 * may be a workspace the model wrote.
 */
export function findOnPath(name: string, env: NodeJS.ProcessEnv = process.env): string | null {
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.resolve(dir, name);
    if (isExecutableFile(candidate)) return candidate;
  }
  return null;
}
