import { describe, expect, it } from 'vitest';
import { parseToolArgs, WORKSPACE_TOOLS } from '../../activities/tools/registry';

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
      'job-kill',
      'job-output',
    ]);
    for (const [name, tool] of Object.entries(WORKSPACE_TOOLS)) expect(tool.name).toBe(name);
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
    const missing = 'invalid arguments for bash: command: give command (to run) or job_id (to read a job)';
    expect(parseToolArgs(bash, {})).toEqual({ ok: false, error: missing });
    expect(parseToolArgs(bash, '')).toEqual({ ok: false, error: missing });
    expect(parseToolArgs(WORKSPACE_TOOLS['job-output'], {})).toEqual({
      ok: false,
      error: 'invalid arguments for job-output: job_id: expected string, received undefined',
    });
  });

  it('takes command or job_id for bash, not both, and offset only with job_id', () => {
    expect(parseToolArgs(bash, { job_id: 'job-1', offset: 5 })).toEqual({
      ok: true,
      args: { job_id: 'job-1', offset: 5 },
    });
    expect(parseToolArgs(bash, { command: 'ls', job_id: 'job-1' })).toEqual({
      ok: false,
      error: 'invalid arguments for bash: job_id: give command or job_id, not both',
    });
    expect(parseToolArgs(bash, { command: 'ls', offset: 3 })).toEqual({
      ok: false,
      error: 'invalid arguments for bash: offset: offset only applies with job_id',
    });
    expect(parseToolArgs(bash, { command: 'ls', sandbox_permissions: 'root' }).ok).toBe(false);
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
