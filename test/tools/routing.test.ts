import { describe, expect, it } from 'vitest';
import { findTool, toolSpecsFor } from '../../activities/tool-catalog';
import { routingOf } from '../../activities/tools/routing';
import { WORKSPACE_TOOL_NAMES } from '../../core/tool-names';

describe('routingOf', () => {
  it('routes a background start, a job read and a job kill', () => {
    expect(routingOf('bash', { command: 'npm run dev', run_in_background: true })).toEqual({
      background: true,
    });
    expect(routingOf('bash', { job_id: 'job-2', offset: 100 })).toEqual({ jobId: 'job-2' });
    expect(routingOf('job-output', { job_id: 'job-2' })).toEqual({ jobId: 'job-2' });
    expect(routingOf('job-kill', '{"job_id":"all"}')).toEqual({ jobId: 'all' });
    expect(routingOf('bash-output', { job_id: 'job-1' })).toEqual({ jobId: 'job-1' });
  });

  it('carries an escalation request with its command and justification', () => {
    expect(
      routingOf('bash', {
        command: 'apt-get install -y jq',
        sandbox_permissions: 'require_escalated',
        justification: 'needs root to install jq',
      }),
    ).toEqual({
      escalation: { command: 'apt-get install -y jq', justification: 'needs root to install jq' },
    });
    expect(routingOf('bash', { command: 'x', sandbox_permissions: 'require_escalated' })).toEqual({
      escalation: { command: 'x', justification: '' },
    });
    const long = routingOf('bash', {
      command: 'c'.repeat(10_000),
      sandbox_permissions: 'require_escalated',
      justification: 'j'.repeat(10_000),
    });
    expect(long?.escalation?.command.length).toBeLessThanOrEqual(4_000);
    expect(long?.escalation?.justification.length).toBeLessThanOrEqual(2_000);
  });

  it('routes nothing for ordinary calls, other tools and unreadable arguments', () => {
    expect(routingOf('bash', { command: 'ls' })).toBeUndefined();
    expect(routingOf('bash', { command: 'ls', sandbox_permissions: 'use_default' })).toBeUndefined();
    expect(routingOf('file-read', { path: 'a', job_id: 'job-1' })).toBeUndefined();
    expect(routingOf('bash', 'not json')).toBeUndefined();
    expect(routingOf('bash', ['ls'])).toBeUndefined();
    expect(routingOf('job-output', {})).toBeUndefined();
  });
});

describe('the job tools in the catalog', () => {
  it('are workspace tools with specs the model is shown', () => {
    expect(WORKSPACE_TOOL_NAMES).toEqual(expect.arrayContaining(['job-output', 'job-kill']));
    expect(toolSpecsFor(WORKSPACE_TOOL_NAMES).map((spec) => spec.name)).toEqual(WORKSPACE_TOOL_NAMES);
    expect(toolSpecsFor(['job-kill'])[0].inputSchema).toMatchObject({ required: ['job_id'] });
    // The retired name still runs, but is not offered.
    expect(findTool('bash-output')?.parse({ job_id: 'job-1' })).toEqual({
      ok: true,
      args: { job_id: 'job-1' },
    });
    expect(WORKSPACE_TOOL_NAMES).not.toContain('bash-output');
  });
});
