/**
 * The tool names of `--allowed-tools` / `--disallowed-tools` (issue 26 item 8): a rule must name one
 * of goalrun's tools or an MCP tool (`mcp__server__tool`), and Claude Code's names are read as
 * goalrun's (`Write` → file-write, `Bash(git:*)` → bash with a command-prefix rule), so a flag copied
 * from a `claude -p` command line works instead of refusing every call.
 */
import { ConfigError } from './errors';
import { GOAL_TOOL_NAMES, TOOL } from './tool-names';

/** Claude Code's tool names and the goalrun tool each stands for. */
export const CLAUDE_TOOL_ALIASES: Readonly<Record<string, string>> = {
  Bash: TOOL.bash,
  Read: TOOL.fileRead,
  Write: TOOL.fileWrite,
  Edit: TOOL.fileEdit,
  MultiEdit: TOOL.fileEdit,
  Glob: TOOL.glob,
  Grep: TOOL.grep,
  LS: TOOL.glob,
  BashOutput: TOOL.jobOutput,
  KillShell: TOOL.jobKill,
  KillBash: TOOL.jobKill,
  TodoWrite: TOOL.todoWrite,
};

/** The prefix of an MCP tool's name (`mcp__server__tool`); its tools are known only once the server starts. */
const MCP_PREFIX = 'mcp__';

/** Claude Code's command-prefix pattern: `git:*` is `git` alone or followed by anything. */
const PREFIX_PATTERN = /^(.*):\*$/s;

const NAMED_RULE = /^([^()]+)(?:\((.*)\))?$/s;

/**
 * The rule as goalrun reads it: an alias replaced by its tool, and Claude Code's `CMD:*` pattern of
 * bash by two goalrun rules, `bash(CMD)` and `bash(CMD *)`. Throws ConfigError naming an unknown tool
 * and listing goalrun's.
 */
export function canonicalToolRule(flag: string, rule: string): string[] {
  const parsed = NAMED_RULE.exec(rule);
  const name = parsed?.[1] ?? rule;
  const pattern = parsed?.[2];
  const tool =
    GOAL_TOOL_NAMES.includes(name) || name.startsWith(MCP_PREFIX) ? name : CLAUDE_TOOL_ALIASES[name];
  if (tool === undefined) {
    throw new ConfigError(
      `${flag}: no tool is named "${name}". goalrun's tools: ${GOAL_TOOL_NAMES.join(', ')}, and MCP tools as mcp__SERVER__TOOL; ` +
        `Claude Code's names are read as goalrun's (${Object.entries(CLAUDE_TOOL_ALIASES)
          .map(([alias, target]) => `${alias} → ${target}`)
          .join(', ')}; Bash(git:*) → bash(git *))`,
    );
  }
  if (pattern === undefined) return [tool];
  const prefix = tool === TOOL.bash ? PREFIX_PATTERN.exec(pattern) : null;
  if (prefix) {
    const command = prefix[1].trimEnd();
    return command === '' ? [tool] : [`${tool}(${command})`, `${tool}(${command} *)`];
  }
  return [`${tool}(${pattern})`];
}
