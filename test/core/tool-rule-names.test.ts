/** Issue 26 item 8: tool rules name real tools, and Claude Code's names are read as goalrun's. */
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../core/errors';
import { GOAL_TOOL_NAMES } from '../../core/tool-names';
import { canonicalToolRule } from '../../core/tool-rule-names';
import { parseToolRules, toolRuleRefusal } from '../../core/tool-rules';

describe('tool rule names', () => {
  it("keeps goalrun's names and MCP tools as they are", () => {
    for (const name of GOAL_TOOL_NAMES) expect(canonicalToolRule('--allowed-tools', name)).toEqual([name]);
    expect(canonicalToolRule('--allowed-tools', 'bash(git *)')).toEqual(['bash(git *)']);
    expect(canonicalToolRule('--allowed-tools', 'mcp__github__search')).toEqual(['mcp__github__search']);
  });

  it("reads Claude Code's names as goalrun's", () => {
    expect(parseToolRules('--allowed-tools', 'Write,Read,Edit,Glob,Grep')).toEqual([
      'file-write',
      'file-read',
      'file-edit',
      'glob',
      'grep',
    ]);
    expect(parseToolRules('--allowed-tools', 'Read(src/*) Bash')).toEqual(['file-read(src/*)', 'bash']);
  });

  it('turns Bash(CMD:*) into a command-prefix rule that matches on a word boundary', () => {
    const allowed = parseToolRules('--allowed-tools', 'Bash(git:*),Bash(npm run test:*), Read');
    expect(allowed).toEqual([
      'bash(git)',
      'bash(git *)',
      'bash(npm run test)',
      'bash(npm run test *)',
      'file-read',
    ]);
    const rules = { allowed };
    expect(toolRuleRefusal(rules, 'bash', { command: 'git' })).toBeNull();
    expect(toolRuleRefusal(rules, 'bash', { command: 'git status --short' })).toBeNull();
    expect(toolRuleRefusal(rules, 'bash', { command: 'npm run test -- x' })).toBeNull();
    expect(toolRuleRefusal(rules, 'bash', { command: 'gitk' })).toMatch(/allows only/);
    expect(toolRuleRefusal(rules, 'bash', { command: 'rm -rf /' })).toMatch(/allows only/);
    expect(toolRuleRefusal(rules, 'file-read', { path: 'a.txt' })).toBeNull();
    expect(parseToolRules('--disallowed-tools', 'Bash(:*)')).toEqual(['bash']);
  });

  it("refuses an unknown name, listing goalrun's tools and the aliases", () => {
    const refuse = (text: string) => () => parseToolRules('--allowed-tools', text);
    expect(refuse('WebFetch')).toThrow(ConfigError);
    expect(refuse('WebFetch')).toThrow(/--allowed-tools: no tool is named "WebFetch"/);
    expect(refuse('file-writer')).toThrow(/bash, file-read, file-write, file-edit, glob, grep/);
    expect(refuse('write')).toThrow(/Write → file-write/);
    expect(refuse('Bash(git:*),Task')).toThrow(/"Task"/);
  });
});
