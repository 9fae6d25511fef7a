/**
 * Session names on the CLI side (issue 17, F-SESSION): the project a name belongs to, checks of a
 * name, and lookup by name. `resolveSessionName` is separate from cli/goal-id.ts on purpose: id
 * resolution can call it where a name is allowed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ConfigError } from '../core/errors';
import { nearestNames } from '../core/nearest-names';
import { projectHash } from '../store/session-id';
import type { SessionRow } from '../store/types';
import type { CliContext } from './context';

/** Longest name accepted (names show in one-line lists). */
export const MAX_SESSION_NAME_CHARS = 100;
/** Sessions of a project looked at to suggest near names. */
const NAMES_LOOKED_AT = 200;

/** The real path of a workspace: a name belongs to the project, however its path was spelled. */
export function projectRealPath(dir: string): string {
  const resolved = path.resolve(dir);
  try {
    return fs.realpathSync(resolved);
  } catch {
    return resolved;
  }
}

/**
 * The project hashes a directory's sessions may carry: of its real path (named sessions) and of its
 * path as given (sessions started before names, or through a symlink).
 */
export function projectHashesOf(dir: string): string[] {
  return [...new Set([projectHash(projectRealPath(dir)), projectHash(path.resolve(dir))])];
}

/** Checks a name given with --name, fork --name or rename; returns it trimmed. */
export function checkSessionName(name: string): string {
  const trimmed = name.trim();
  if (!trimmed) throw new ConfigError('the session name is empty');
  if (trimmed.length > MAX_SESSION_NAME_CHARS)
    throw new ConfigError(
      `the session name has ${trimmed.length} characters; at most ${MAX_SESSION_NAME_CHARS}`,
    );
  if (/[\r\n\t]/.test(trimmed)) throw new ConfigError('the session name must be one line');
  return trimmed;
}

/** The project's session with this name, or null. */
export async function findSessionByName(
  context: CliContext,
  name: string,
  dir = process.cwd(),
): Promise<SessionRow | null> {
  const store = await context.sessionStore();
  return store.findSessionByName(projectHashesOf(dir), name.trim());
}

/** The error for a name the project has no session of, with the project's nearest names. */
export async function unknownNameError(
  context: CliContext,
  name: string,
  dir = process.cwd(),
): Promise<ConfigError> {
  const store = await context.sessionStore();
  const rows = await store.listProjectSessions(projectHashesOf(dir), NAMES_LOOKED_AT);
  const names = rows.map((row) => row.name).filter((each): each is string => !!each);
  const near = nearestNames(name, names);
  const hint =
    near.length > 0 ? `; nearest names: ${near.join(', ')}` : '; this project has no named sessions';
  return new ConfigError(`no session named "${name}" in ${projectRealPath(dir)}${hint}`);
}

/** The session id of a name of this project; throws the unknown-name error when there is none. */
export async function resolveSessionName(
  context: CliContext,
  name: string,
  dir = process.cwd(),
): Promise<string> {
  const row = await findSessionByName(context, name, dir);
  if (row) return row.id;
  throw await unknownNameError(context, name, dir);
}
