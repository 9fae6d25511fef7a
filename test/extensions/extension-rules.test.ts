/**
 * Unit tests of the pure rules behind MCP servers, project instructions and hooks: tool names, the
 * schema check, the cap on instructions, `${VAR}` expansion, the config schemas' errors, the
 * approval routing of MCP calls and what a notify hook is told.
 */
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import {
  describeIssues,
  hooksSchema,
  mcpConfigFileSchema,
  mcpServersSchema,
} from '../../activities/extensions/config-schemas';
import { expandVariables, UnexpandableVariable } from '../../activities/extensions/env-expansion';
import { mcpRouting, mcpToolSpecs } from '../../activities/extensions/mcp-model-view';
import { isMcpToolName, mcpCallSummary, mcpServerOf, mcpToolName } from '../../core/extensions/mcp-names';
import { checkToolSchema, MCP_SCHEMA_MAX_BYTES } from '../../core/extensions/mcp-schema-check';
import { notifyStatus, resumeCommandFor } from '../../core/extensions/notify-status';
import { capInstructions } from '../../core/extensions/project-instructions';
import { mcpCallNeedsApproval, type WorkspaceContextData } from '../../core/extensions/workspace-context';

describe('MCP tool names', () => {
  it('are mcp__<server>__<tool>, with characters providers refuse mapped and long names refused', () => {
    expect(mcpToolName('everything', 'get-sum')).toBe('mcp__everything__get-sum');
    expect(mcpToolName('db', 'query.run/v2')).toBe('mcp__db__query_run_v2');
    expect(mcpToolName('s', 'x'.repeat(60))).toBeNull();
    expect(isMcpToolName('mcp__db__query')).toBe(true);
    expect(isMcpToolName('bash')).toBe(false);
    expect(mcpServerOf('mcp__my_db__query__all')).toBe('my_db');
    expect(mcpCallSummary('mcp__github__create_issue')).toBe('mcp github: create_issue');
  });
});

describe('the schema check', () => {
  it('takes object schemas, adds empty properties, and refuses what a provider would reject', () => {
    expect(checkToolSchema({ type: 'object' })).toEqual({
      ok: true,
      schema: { type: 'object', properties: {} },
    });
    expect(checkToolSchema({ type: 'string' })).toMatchObject({
      ok: false,
      problem: expect.stringContaining('"string"'),
    });
    expect(checkToolSchema(null)).toMatchObject({ ok: false });
    expect(checkToolSchema({ type: 'object', required: 'a' })).toMatchObject({ ok: false });
    const huge = {
      type: 'object',
      properties: { a: { type: 'string', description: 'x'.repeat(MCP_SCHEMA_MAX_BYTES) } },
    };
    expect(checkToolSchema(huge)).toMatchObject({ ok: false, problem: expect.stringContaining('bytes') });
  });
});

describe('the cap on project instructions', () => {
  it('keeps whole files while they fit, cuts the first that does not, leaves out the rest, and says which', () => {
    const capped = capInstructions(
      [
        { label: '$GOALRUN_HOME/AGENTS.md', text: 'a'.repeat(600) },
        { label: 'AGENTS.md', text: `${'b'.repeat(300)}\n${'c'.repeat(300)}` },
        { label: 'sub/AGENTS.md', text: 'ddd'.repeat(3) },
      ],
      1000,
    );
    expect(capped.files).toEqual([
      { label: '$GOALRUN_HOME/AGENTS.md', bytes: 600, shownBytes: 600 },
      { label: 'AGENTS.md', bytes: 601, shownBytes: 301 },
      { label: 'sub/AGENTS.md', bytes: 9, shownBytes: 0 },
    ]);
    expect(capped.notice).toMatch(/cut AGENTS\.md \(301 of 601 bytes shown\); left out sub\/AGENTS\.md/);
    expect(capped.text.indexOf('$GOALRUN_HOME/AGENTS.md')).toBeLessThan(capped.text.indexOf('## AGENTS.md'));
    expect(capped.text).not.toContain('ccc');
    expect(capped.text).not.toContain('ddd');
  });

  it('has no text and no notice without files, and never splits a character', () => {
    expect(capInstructions([])).toEqual({ text: '', files: [], notice: null });
    const capped = capInstructions([{ label: 'AGENTS.md', text: '😀'.repeat(10) }], 9);
    expect(capped.files[0].shownBytes).toBe(8);
    expect(capped.text).toContain('😀😀');
    expect(capped.text).not.toContain('\uFFFD');
  });
});

describe('VAR expansion in MCP configs', () => {
  const env = { TOKEN_FOR_SERVER: 'abc', EMPTY: '' };
  it('takes values from the environment, defaults when unset, and names what is missing', () => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the syntax under test
    expect(expandVariables('Bearer ${TOKEN_FOR_SERVER}', env, 'x')).toBe('Bearer abc');
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the syntax under test
    expect(expandVariables('${EMPTY:-fallback}', env, 'x')).toBe('fallback');
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the syntax under test
    expect(() => expandVariables('${MISSING}', env, 'headers.X')).toThrow(
      /headers\.X: \$\{MISSING\} is not set/,
    );
  });

  it("never expands goalrun's, Temporal's, the providers' variables or the store's URL", () => {
    for (const name of [
      'OPENAI_API_KEY',
      'ANTHROPIC_API_KEY',
      'DATABASE_URL',
      'GOALRUN_HOME',
      'TEMPORAL_ADDRESS',
    ]) {
      expect(() => expandVariables(`\${${name}}`, { [name]: 'secret' }, 'env.X')).toThrow(
        UnexpandableVariable,
      );
    }
  });
});

describe('the MCP config schemas', () => {
  it('reads a Claude Code / Cursor file unchanged, other keys ignored', () => {
    const parsed = mcpConfigFileSchema(z).parse({
      mcpServers: {
        github: { command: 'npx', args: ['-y', 'server'], env: { GITHUB_TOKEN: 'x' }, disabled: false },
        remote: { url: 'https://example.test/mcp', headers: { Authorization: 'Bearer x' } },
      },
      other: true,
    });
    expect(Object.keys(parsed.mcpServers)).toEqual(['github', 'remote']);
  });

  it('names the bad key', () => {
    const file = mcpConfigFileSchema(z).safeParse({
      mcpServers: { a: { command: 'x', args: 'not-a-list' } },
    });
    expect(file.success).toBe(false);
    if (!file.success) expect(describeIssues(file.error)).toMatch(/^mcpServers\.a\.args: /);
    const config = mcpServersSchema(z, true).safeParse({ a: { command: 'x', aproval: 'always' } });
    expect(config.success).toBe(false);
    if (!config.success)
      expect(describeIssues(config.error, 'mcp_servers')).toMatch(/mcp_servers\.a.*aproval/);
    const badName = mcpServersSchema(z, true).safeParse({ a__b: { command: 'x' } });
    expect(badName.success).toBe(false);
    const hooks = hooksSchema(z).safeParse({ pre_tool: [{ command: 'x', matcher: '(' }] });
    expect(hooks.success).toBe(false);
    if (!hooks.success)
      expect(describeIssues(hooks.error, 'hooks')).toMatch(/^hooks\.pre_tool\.0\.matcher: /);
  });
});

describe('MCP calls and approval', () => {
  const context = (approval: 'never' | 'on-request' | 'always') =>
    ({
      mcp: {
        servers: [{ name: 'db', transport: 'stdio', approval, source: 'config', ok: true, tools: 2 }],
        tools: [
          {
            name: 'mcp__db__read',
            server: 'db',
            tool: 'read',
            description: 'reads',
            inputSchema: { type: 'object', properties: {} },
            readOnly: true,
          },
          {
            name: 'mcp__db__drop',
            server: 'db',
            tool: 'drop',
            description: '',
            inputSchema: { type: 'object', properties: {} },
            readOnly: false,
          },
        ],
      },
    }) as unknown as WorkspaceContextData;

  it('waits for a human as the server asks: never, writes only (on-request), always', () => {
    expect(mcpCallNeedsApproval('never', false)).toBe(false);
    expect(mcpCallNeedsApproval('on-request', true)).toBe(false);
    expect(mcpCallNeedsApproval('on-request', false)).toBe(true);
    expect(mcpCallNeedsApproval('always', true)).toBe(true);
    const call = (toolName: string) => ({
      type: 'tool-call' as const,
      toolCallId: 'c1',
      toolName,
      input: { table: 't' },
    });
    expect(mcpRouting(call('mcp__db__read'), context('on-request'))).toBeUndefined();
    expect(mcpRouting(call('mcp__db__drop'), context('on-request'))?.escalation).toMatchObject({
      command: 'db: drop {"table":"t"}',
      mcpServer: 'db',
    });
    expect(mcpRouting(call('mcp__db__drop'), context('never'))).toBeUndefined();
    expect(mcpRouting(call('mcp__db__drop'), null)).toBeUndefined();
  });

  it('offers the tools with a description even when the server gave none', () => {
    expect(mcpToolSpecs(context('never')).map((spec) => [spec.name, spec.description])).toEqual([
      ['mcp__db__read', 'reads'],
      ['mcp__db__drop', 'drop (MCP server db)'],
    ]);
    expect(mcpToolSpecs(null)).toEqual([]);
  });
});

describe('what a notify hook is told', () => {
  it('names the command that moves the goal on, and for an approval both answers', () => {
    expect(resumeCommandFor('completed', 's1')).toBe('goalrun resume s1 --message "…"');
    expect(resumeCommandFor('paused', 's1')).toBe('goalrun unpause s1');
    expect(resumeCommandFor('budget_reached', 's1')).toBe(
      'goalrun limits s1 --max-cost-usd N   (the daily budget: goalrun budget set --daily-usd N)',
    );
    const status = notifyStatus({
      sessionId: 's1',
      workflowId: 'goalrun-s1',
      status: 'waiting_approval',
      reason: 'waiting',
      objective: 'x'.repeat(1000),
      costUsd: 0.25,
      steps: 3,
      iterations: 1,
      approval: { command: 'rm x', justification: 'why' },
    });
    expect(status.objective.length).toBe(300);
    expect(status).toMatchObject({
      resume_command: 'goalrun approve s1',
      approval: {
        command: 'rm x',
        approve_command: 'goalrun approve s1',
        deny_command: 'goalrun deny s1 --reason "…"',
      },
    });
  });
});
