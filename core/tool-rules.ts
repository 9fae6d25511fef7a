/**
 * `--allowed-tools` / `--disallowed-tools` (as in `claude -p`): which tool calls a goal may make. A
 * rule is a tool name (`bash`, `file-write`, `mcp__server__tool`) or a name with a pattern over the
 * call's main argument (`bash(git *)`, `file-write(src/*)`), where `*` matches any text. Checked on
 * the tool host before a call runs; a refused call becomes an error result the model reads.
 */
import { ConfigError } from './errors';
import { canonicalToolRule } from './tool-rule-names';

/** The rules a goal carries (small: a few patterns). */
export interface ToolRules {
  /** When present, only calls matching one of these run. */
  allowed?: string[];
  /** Calls matching one of these never run (wins over allowed). */
  disallowed?: string[];
}

/** Rules a goal may carry, and the length of one: headless flags, not a policy file. */
export const MAX_TOOL_RULES = 64;
export const MAX_TOOL_RULE_CHARS = 200;

/** The argument a pattern is matched against, per tool; other tools match on their JSON arguments. */
const MAIN_ARGUMENT: Record<string, string> = {
  bash: 'command',
  'file-read': 'path',
  'file-write': 'path',
  'file-edit': 'path',
  glob: 'pattern',
  grep: 'pattern',
};

const RULE = /^([A-Za-z0-9_.:-]+)(?:\((.*)\))?$/s;

/**
 * Parses the rules of a flag, separated by commas or spaces (as `claude -p` takes them), checking
 * each and reading Claude Code's tool names as goalrun's (tool-rule-names.ts); throws ConfigError
 * naming a bad one.
 */
export function parseToolRules(flag: string, text: string): string[] {
  const rules = text
    .split(/[,\s](?![^(]*\))/)
    .map((rule) => rule.trim())
    .filter((rule) => rule !== '');
  if (rules.length === 0) throw new ConfigError(`${flag} needs at least one tool name or pattern`);
  if (rules.length > MAX_TOOL_RULES) throw new ConfigError(`${flag}: at most ${MAX_TOOL_RULES} rules`);
  for (const rule of rules) {
    if (rule.length > MAX_TOOL_RULE_CHARS || !RULE.test(rule)) {
      throw new ConfigError(`${flag}: "${rule}" is not a tool name or a pattern like bash(git *)`);
    }
  }
  return [...new Set(rules.flatMap((rule) => canonicalToolRule(flag, rule)))];
}

/** Whether one rule matches a call. */
function matches(rule: string, toolName: string, args: unknown): boolean {
  const parsed = RULE.exec(rule);
  if (!parsed || parsed[1] !== toolName) return false;
  if (parsed[2] === undefined) return true;
  return globToRegExp(parsed[2]).test(mainArgument(toolName, args));
}

function mainArgument(toolName: string, args: unknown): string {
  const field = MAIN_ARGUMENT[toolName];
  const value =
    field && args && typeof args === 'object' ? (args as Record<string, unknown>)[field] : undefined;
  return typeof value === 'string' ? value : JSON.stringify(args ?? {});
}

function globToRegExp(glob: string): RegExp {
  const escaped = glob.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[\\s\\S]*');
  return new RegExp(`^${escaped}$`);
}

/** Why a call may not run under the goal's rules, for the model; null when it may. */
export function toolRuleRefusal(
  rules: ToolRules | undefined,
  toolName: string,
  args: unknown,
): string | null {
  if (!rules) return null;
  const denied = rules.disallowed?.find((rule) => matches(rule, toolName, args));
  if (denied) {
    return `this call was not run: the goal disallows ${denied} (--disallowed-tools). Do it another way, or call finish with status "blocked" if it cannot be done without it.`;
  }
  if (rules.allowed && !rules.allowed.some((rule) => matches(rule, toolName, args))) {
    return `this call was not run: the goal allows only ${rules.allowed.join(', ')} (--allowed-tools). Use an allowed tool, or call finish with status "blocked" if the objective needs more.`;
  }
  return null;
}
