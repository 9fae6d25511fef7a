import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../core/errors';
import { parseToolRules, toolRuleRefusal } from '../../core/tool-rules';

describe('tool rules', () => {
  it('parses names and patterns, commas inside a pattern included', () => {
    expect(parseToolRules('--allowed-tools', 'bash(git *), file-read,grep')).toEqual([
      'bash(git *)',
      'file-read',
      'grep',
    ]);
    expect(parseToolRules('--allowed-tools', 'bash(echo a,b)')).toEqual(['bash(echo a,b)']);
    expect(() => parseToolRules('--allowed-tools', 'bad name!')).toThrow(ConfigError);
    expect(() => parseToolRules('--allowed-tools', ' , ')).toThrow(/at least one/);
  });

  it('refuses disallowed calls and calls outside the allowed ones, matching the main argument', () => {
    const rules = { allowed: ['bash(git *)', 'file-read'], disallowed: ['bash(git push*)'] };
    expect(toolRuleRefusal(rules, 'bash', { command: 'git status' })).toBeNull();
    expect(toolRuleRefusal(rules, 'file-read', { path: 'a.txt' })).toBeNull();
    expect(toolRuleRefusal(rules, 'bash', { command: 'git push origin' })).toMatch(
      /disallows bash\(git push\*\)/,
    );
    expect(toolRuleRefusal(rules, 'bash', { command: 'rm -rf x' })).toMatch(
      /allows only bash\(git \*\), file-read/,
    );
    expect(toolRuleRefusal(rules, 'file-write', { path: 'a.txt' })).toMatch(/allows only/);
    expect(toolRuleRefusal(undefined, 'bash', { command: 'anything' })).toBeNull();
    expect(toolRuleRefusal({ disallowed: ['file-write(*.lock)'] }, 'file-write', { path: 'x.lock' })).toMatch(
      /disallows/,
    );
  });
});
