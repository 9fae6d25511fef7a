/**
 * The project-local config (issue 17): `.goalrun/config.json` in the workspace, else in its git
 * root, overrides the global `$GOALRUN_HOME/config.json` key by key, validated the same way. A
 * project's file comes with the repository, so it may not set what would send credentials, goals or
 * tool processes elsewhere (connections, base URL, sandbox, extensions): those stay the user's.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ConfigError } from '../core/errors';
import type { GoalrunConfig } from './config-schema';

/** Where a project's config lives, relative to the workspace or its git root. */
export const PROJECT_CONFIG_PATH = path.join('.goalrun', 'config.json');

/** Keys a project's config may not set: they route secrets, goals or processes (set them in the global file). */
export const PROJECT_CONFIG_REFUSED_KEYS = [
  'base_url',
  'database_url',
  'temporal_address',
  'temporal_http_address',
  'temporal_namespace',
  'task_queue',
  'tools_queue',
  'payload_keys_file',
  'sandbox',
  'mcp_servers',
  'hooks',
  'trust_project_mcp',
  // A daily clean of every project of the store: a repository's file may not ask for deletions.
  'retention',
] as const;

/** The git root above a directory (the nearest with a .git entry), or null. */
export function gitRootOf(dir: string): string | null {
  let current = path.resolve(dir);
  for (;;) {
    if (fs.existsSync(path.join(current, '.git'))) return current;
    const parent = path.dirname(current);
    if (parent === current) return null;
    current = parent;
  }
}

/** The project config file for a workspace: in it, else in its git root; null when there is none. */
export function findProjectConfig(workspace: string): string | null {
  const candidates = [path.resolve(workspace), gitRootOf(workspace)].filter(
    (dir): dir is string => dir !== null,
  );
  for (const dir of candidates) {
    const file = path.join(dir, PROJECT_CONFIG_PATH);
    if (fs.existsSync(file)) return file;
  }
  return null;
}

/** Refuses a project config that sets a key only the global config may set. */
export function checkProjectConfig(file: string, config: GoalrunConfig): GoalrunConfig {
  const refused = PROJECT_CONFIG_REFUSED_KEYS.filter((key) => key in config);
  if (refused.length > 0) {
    throw new ConfigError(
      `project config ${file} sets ${refused.join(', ')}, which only the global config may set (they route credentials, goals or processes); move ${refused.length === 1 ? 'it' : 'them'} to $GOALRUN_HOME/config.json`,
    );
  }
  return config;
}
