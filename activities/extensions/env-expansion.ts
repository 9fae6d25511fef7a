/**
 * `${VAR}` and `${VAR:-default}` in an MCP server's env, args, url and headers, taken from the tool
 * host's environment when the server is started (Claude Code's syntax, so a user's file works as it
 * is). The values stay in the tool host's memory: they never enter a payload, the store or a log.
 * goalrun's, Temporal's and the providers' variables and the store's URL are never expanded.
 */
import { isProviderOrStoreName } from '../sandbox/environment';

const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/** A reference that could not be expanded. */
export class UnexpandableVariable extends Error {
  readonly type = 'UnexpandableVariable';
  constructor(message: string) {
    super(message);
    this.name = 'UnexpandableVariable';
  }
}

/** The text with every reference replaced; throws UnexpandableVariable naming the variable (never a value). */
export function expandVariables(text: string, env: NodeJS.ProcessEnv, where: string): string {
  return text.replace(REFERENCE, (_match, name: string, fallback: string | undefined) => {
    if (isProviderOrStoreName(name)) {
      throw new UnexpandableVariable(
        `${where}: \${${name}} is one of goalrun's own variables and is never passed on`,
      );
    }
    const value = env[name];
    if (value !== undefined && value !== '') return value;
    if (fallback !== undefined) return fallback;
    throw new UnexpandableVariable(`${where}: \${${name}} is not set on the tool host`);
  });
}

/** Every value of a record expanded. */
export function expandRecord(
  record: Record<string, string> | undefined,
  env: NodeJS.ProcessEnv,
  where: string,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(record ?? {}))
    out[name] = expandVariables(value, env, `${where}.${name}`);
  return out;
}
