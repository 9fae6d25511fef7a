/**
 * The environment of a tool process: an allow-list, never the worker's environment with a few
 * names removed. Anything that looks like a credential or belongs to goalrun, Temporal or a model
 * provider never passes, even when a goal's config asks for it by name.
 */

/** Names every tool process gets (when the worker has them). */
export const BASE_ENV_NAMES: readonly string[] = [
  'PATH',
  'HOME',
  'LANG',
  'TERM',
  'TZ',
  'USER',
  'SHELL',
  'TMPDIR',
];

/** Prefixes of names that pass like the base names (locale settings). */
const BASE_ENV_PREFIXES: readonly string[] = ['LC_'];

/** Substrings of names that may hold a credential. */
const SECRET_NAME_PARTS: readonly string[] = ['KEY', 'TOKEN', 'SECRET', 'PASSWORD', 'PASSWD', 'CREDENTIAL'];

/** Names that never pass whatever their spelling suggests. */
const FORBIDDEN_NAMES: ReadonlySet<string> = new Set(['DATABASE_URL']);

/** Prefixes of goalrun's, Temporal's and the model providers' own variables. */
const FORBIDDEN_PREFIXES: readonly string[] = ['TEMPORAL_', 'GOALRUN_', 'OPENAI_', 'ANTHROPIC_', 'OLLAMA_'];

/** True when a variable of this name may hold a credential (`*KEY*`, `*TOKEN*`, `*SECRET*`, `*PASSWORD*`). */
export function isSecretLookingName(name: string): boolean {
  const upper = name.toUpperCase();
  return SECRET_NAME_PARTS.some((part) => upper.includes(part));
}

/** True when a variable of this name must never reach a tool process. */
export function isForbiddenEnvName(name: string): boolean {
  const upper = name.toUpperCase();
  return (
    isSecretLookingName(upper) ||
    FORBIDDEN_NAMES.has(upper) ||
    FORBIDDEN_PREFIXES.some((prefix) => upper.startsWith(prefix))
  );
}

/**
 * True for goalrun's, Temporal's and the providers' own variables and the store's URL: these never
 * reach a tool process, not even when a config names them (an MCP server's `env` may pass other
 * credentials, e.g. a GITHUB_TOKEN the user gives that server on purpose).
 */
export function isProviderOrStoreName(name: string): boolean {
  const upper = name.toUpperCase();
  return FORBIDDEN_NAMES.has(upper) || FORBIDDEN_PREFIXES.some((prefix) => upper.startsWith(prefix));
}

/** True when the allow-list (before the forbidden check) includes this name. */
function isAllowedName(name: string, extraNames: ReadonlySet<string>): boolean {
  return (
    BASE_ENV_NAMES.includes(name) ||
    BASE_ENV_PREFIXES.some((prefix) => name.startsWith(prefix)) ||
    extraNames.has(name)
  );
}

/**
 * The environment of a tool process: the allow-listed names from `source` (base names plus
 * `extraNames`, the goal's `sandbox.env`), minus every forbidden name, then `overrides` (the
 * sandbox's own HOME and TMPDIR; an undefined override removes the name).
 */
export function toolEnvironment(
  source: NodeJS.ProcessEnv,
  extraNames: readonly string[],
  overrides: Record<string, string | undefined> = {},
): Record<string, string> {
  const extras = new Set(extraNames);
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(source)) {
    if (value === undefined || !isAllowedName(name, extras) || isForbiddenEnvName(name)) continue;
    env[name] = value;
  }
  for (const [name, value] of Object.entries(overrides)) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}
