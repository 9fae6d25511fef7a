import { describe, expect, it } from 'vitest';
import { parseToolArgs, toolSpecsFor, WORKSPACE_TOOLS } from '../../activities/tools/registry';

const bash = WORKSPACE_TOOLS.bash;
const fileEdit = WORKSPACE_TOOLS['file-edit'];

describe('WORKSPACE_TOOLS', () => {
  it('holds every workspace tool under its kebab-case name', () => {
    expect(Object.keys(WORKSPACE_TOOLS).sort()).toEqual([
      'bash',
      'file-edit',
      'file-read',
      'file-write',
      'glob',
      'grep',
    ]);
    for (const [name, tool] of Object.entries(WORKSPACE_TOOLS)) expect(tool.name).toBe(name);
  });
});

describe('toolSpecsFor', () => {
  it('returns JSON Schemas of the arguments, in the order asked', () => {
    const [grep, bashSpec] = toolSpecsFor(['grep', 'bash']);
    expect(grep.name).toBe('grep');
    expect(bashSpec.name).toBe('bash');
    expect(bashSpec.description).toMatch(/workspace/);
    expect(bashSpec.description).toMatch(/time/);
    expect(bashSpec.inputSchema).toMatchObject({
      type: 'object',
      required: ['command'],
      properties: { command: { type: 'string' }, timeout_ms: { type: 'integer' } },
    });
    expect(bashSpec.inputSchema).not.toHaveProperty('$schema');
  });

  it('returns every tool without names, and throws on unknown ones', () => {
    expect(toolSpecsFor().map((spec) => spec.name)).toEqual(Object.keys(WORKSPACE_TOOLS));
    expect(() => toolSpecsFor(['nope'])).toThrow(/unknown tool: nope/);
  });
});

describe('parseToolArgs', () => {
  it('accepts an object or a JSON string', () => {
    expect(parseToolArgs(bash, { command: 'ls' })).toEqual({ ok: true, args: { command: 'ls' } });
    expect(parseToolArgs(bash, '{"command":"ls","timeout_ms":1000}')).toEqual({
      ok: true,
      args: { command: 'ls', timeout_ms: 1000 },
    });
  });

  it('names a missing field', () => {
    expect(parseToolArgs(bash, {})).toEqual({
      ok: false,
      error: 'invalid arguments for bash: command: expected string, received undefined',
    });
    expect(parseToolArgs(bash, '')).toEqual({
      ok: false,
      error: 'invalid arguments for bash: command: expected string, received undefined',
    });
  });

  it('names every field of the wrong type', () => {
    const result = parseToolArgs(fileEdit, { path: 'a', old_string: 1, new_string: 'x', replace_all: 'yes' });
    expect(result).toEqual({
      ok: false,
      error:
        'invalid arguments for file-edit: old_string: expected string, received number; ' +
        'replace_all: expected boolean, received string',
    });
  });

  it('explains out-of-range values', () => {
    const result = parseToolArgs(bash, { command: 'ls', timeout_ms: 10 * 60 * 60_000 });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toMatch(/^invalid arguments for bash: timeout_ms: Too big/);
  });

  it('rejects non-JSON strings and non-object JSON', () => {
    const notJson = parseToolArgs(bash, 'command: ls');
    expect(notJson.ok).toBe(false);
    if (!notJson.ok) expect(notJson.error).toMatch(/^invalid arguments for bash: not valid JSON \(.+\)$/);
    expect(parseToolArgs(bash, '["ls"]')).toEqual({
      ok: false,
      error: 'invalid arguments for bash: expected object, received array',
    });
  });
});
