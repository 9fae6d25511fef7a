/**
 * Redaction of known secret values (provider keys, the database password) from tool output before
 * it is stored, spooled or returned. The sandbox keeps secrets out of tool processes; this is the
 * second wall, for what reaches a tool anyway (a file that holds a key, an unsandboxed command).
 */
import { isSecretLookingName } from './environment';

/** What a redacted value is replaced by. */
export const REDACTED = '[REDACTED]';

/**
 * Secrets at least this long are replaced wherever they occur. Shorter ones (a dev database's
 * `goalrun` password) are ordinary words too, so they are replaced only where they stand as a
 * credential: in a URL's user info or after `password=` and the like.
 */
export const MIN_FREE_SECRET_CHARS = 8;

/** Values shorter than this, found in secret-looking variables, are flags, not secrets (`1`, `yes`). */
const MIN_ENV_SECRET_CHARS = 4;

/** Names that introduce a credential in `name=value` or `"name": "value"` text. */
const CREDENTIAL_WORDS = 'pass(?:word|wd)?|pwd|secret|token|api[_-]?key|key';

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}

/** The spellings under which a secret shows up in text: as is, percent-encoded (in a URL), JSON-escaped. */
function spellings(secret: string): string[] {
  const forms = new Set([secret, encodeURIComponent(secret), JSON.stringify(secret).slice(1, -1)]);
  try {
    forms.add(encodeURI(secret));
  } catch {
    // A lone surrogate cannot be URI-encoded; the other spellings still apply.
  }
  return [...forms].filter((form) => form !== '');
}

/** Compiled redaction patterns for a list of secrets; reuse it when redacting many texts. */
export type Redactor = (text: string) => string;

/** A redactor for these secrets (empty and whitespace-only values are ignored). */
export function createRedactor(secrets: readonly string[]): Redactor {
  const unique = [...new Set(secrets.filter((secret) => secret.trim() !== ''))];
  const free = unique.filter((secret) => secret.length >= MIN_FREE_SECRET_CHARS);
  const short = unique.filter((secret) => secret.length < MIN_FREE_SECRET_CHARS);
  const patterns: RegExp[] = [];
  if (free.length > 0) {
    // Longest first, so a key that contains another key is replaced whole.
    const forms = [...new Set(free.flatMap(spellings))].sort((a, b) => b.length - a.length);
    patterns.push(new RegExp(forms.map(escapeRegExp).join('|'), 'g'));
  }
  if (short.length > 0) {
    const forms = [...new Set(short.flatMap(spellings))].sort((a, b) => b.length - a.length);
    const value = `(?:${forms.map(escapeRegExp).join('|')})`;
    // user:<secret>@host in a URL.
    patterns.push(new RegExp(`(?<=:)${value}(?=@)`, 'g'));
    // password=<secret>, PGPASSWORD: "<secret>", "api_key": "<secret>"
    patterns.push(new RegExp(`(?<=(?:${CREDENTIAL_WORDS})["']?\\s*[:=]\\s*["']?)${value}(?![\\w.~-])`, 'gi'));
  }
  if (patterns.length === 0) return (text) => text;
  return (text) => patterns.reduce((redacted, pattern) => redacted.replace(pattern, REDACTED), text);
}

/** Replaces every known secret value in `text` by {@link REDACTED}. */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  return createRedactor(secrets)(text);
}

/** The password in a URL's user info (`postgres://user:pw@host/db` → `pw`), decoded. */
export function urlPassword(value: string): string | undefined {
  try {
    const url = new URL(value);
    return url.password === '' ? undefined : decodeURIComponent(url.password);
  } catch {
    return undefined;
  }
}

/**
 * The secret values a worker can find in its own environment: the values of secret-looking
 * variables (`*KEY*`, `*TOKEN*`, `*SECRET*`, `*PASSWORD*`) and the passwords of URLs
 * (`DATABASE_URL`). The lead passes the authoritative list as ActivityDeps.secrets; this is the
 * fallback when it does not, and a sensible default for it.
 */
export function secretsFromEnvironment(env: NodeJS.ProcessEnv): string[] {
  const secrets = new Set<string>();
  for (const [name, value] of Object.entries(env)) {
    if (!value) continue;
    if (isSecretLookingName(name) && value.length >= MIN_ENV_SECRET_CHARS) secrets.add(value);
    const password = value.includes('://') ? urlPassword(value) : undefined;
    if (password) secrets.add(password);
  }
  return [...secrets];
}
