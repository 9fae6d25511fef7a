/**
 * How tools turn a model's path argument into a real path, and how they talk about paths and file
 * system errors in their output.
 */
import path from 'node:path';

/** Resolves a tool path argument: relative paths are taken inside the workspace, absolute ones as given. */
export function resolveToolPath(workspace: string, toolPath: string): string {
  return path.isAbsolute(toolPath) ? path.normalize(toolPath) : path.resolve(workspace, toolPath);
}

/** The path as tools print it: relative to the workspace when inside it (so it can be passed back), else absolute. */
export function displayPath(workspace: string, absolutePath: string): string {
  const relative = path.relative(workspace, absolutePath);
  if (relative === '') return '.';
  if (relative.startsWith('..') || path.isAbsolute(relative)) return absolutePath;
  return relative.split(path.sep).join('/');
}

/** A file system error as one sentence a model can act on, naming the path it was about. */
export function describeFsError(error: unknown, shownPath: string): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case 'ENOENT':
      return `file not found: ${shownPath} (paths are relative to the workspace; use glob to find files)`;
    case 'ENOTDIR':
      return `not found: ${shownPath} (a parent of it is a file, not a directory)`;
    case 'EISDIR':
      return `${shownPath} is a directory, not a file (use glob to list its files)`;
    case 'EACCES':
    case 'EPERM':
      return `permission denied: ${shownPath}`;
    default:
      return `${shownPath}: ${error instanceof Error ? error.message : String(error)}`;
  }
}
