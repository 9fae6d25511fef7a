import { describe, expect, it } from 'vitest';
import { toolSpecsFor } from '../../activities/tool-catalog';
import { GOAL_TOOL_NAMES, GOAL_TOOL_NAMES_WITH_AGENT, LEGACY_TOOL, TOOL } from '../../core/tool-names';

/** Whether a value is a plain JSON object (not an array, not null). */
const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

describe('toolSpecsFor: the tools a goal offers its model', () => {
  const specs = toolSpecsFor(GOAL_TOOL_NAMES_WITH_AGENT);

  it('offers every named tool, workspace tools first, in the order the workflow asks', () => {
    expect(specs.map((spec) => spec.name)).toEqual([
      'bash',
      'file-read',
      'file-write',
      'file-edit',
      'glob',
      'grep',
      'tool-output',
      'job-output',
      'job-kill',
      'memory-search',
      'todo-write',
      'finish',
      'agent',
    ]);
    // Every tool that has a name is offered: none is named but forgotten.
    expect([...GOAL_TOOL_NAMES_WITH_AGENT].sort()).toEqual(Object.values(TOOL).sort());
    // A goal that may start no more sub-agents (or of a build before them) is offered the rest, in the same order.
    expect(GOAL_TOOL_NAMES_WITH_AGENT.slice(0, -1)).toEqual(GOAL_TOOL_NAMES);
  });

  it('gives each a description and a JSON Schema object of its arguments, without $schema', () => {
    for (const spec of specs) {
      expect(spec.description.length, spec.name).toBeGreaterThan(20);
      expect(spec.inputSchema.type, spec.name).toBe('object');
      expect(isObject(spec.inputSchema.properties), spec.name).toBe(true);
      expect(spec.inputSchema.additionalProperties, spec.name).toBe(false);
      expect(spec.inputSchema, spec.name).not.toHaveProperty('$schema');
      // Plain JSON: what a provider serializes is what was built.
      expect(JSON.parse(JSON.stringify(spec.inputSchema)), spec.name).toEqual(spec.inputSchema);
    }
  });

  it('describes the arguments of bash, todo-write and finish', () => {
    const byName = new Map(specs.map((spec) => [spec.name, spec]));
    expect(byName.get('bash')?.inputSchema).toMatchObject({
      properties: {
        command: { type: 'string' },
        timeout_ms: { type: 'integer' },
        run_in_background: { type: 'boolean' },
        job_id: { type: 'string' },
        offset: { type: 'integer' },
        sandbox_permissions: { enum: ['use_default', 'require_escalated'] },
        justification: { type: 'string' },
      },
    });
    expect(Object.keys(byName.get('todo-write')?.inputSchema.properties as object)).toEqual([
      'todos',
      'merge',
      'delete',
      'clear_completed',
    ]);
    expect(byName.get('finish')?.inputSchema).toMatchObject({
      required: ['status', 'summary'],
      properties: { status: { enum: ['complete', 'blocked'] } },
    });
  });

  it('returns the specs in the order asked, for any subset', () => {
    expect(toolSpecsFor(['finish', 'grep', 'bash']).map((spec) => spec.name)).toEqual([
      'finish',
      'grep',
      'bash',
    ]);
    expect(toolSpecsFor([])).toEqual([]);
    // A retired name still has a spec (it runs), though goals no longer offer it.
    expect(toolSpecsFor([LEGACY_TOOL.bashOutput])[0].inputSchema).toMatchObject({ required: ['job_id'] });
  });

  it('throws on an unknown name, naming it', () => {
    expect(() => toolSpecsFor(['nope'])).toThrow(/unknown tool: nope/);
    expect(() => toolSpecsFor(['bash', 'todo_write'])).toThrow(/unknown tool: todo_write \(known: .*bash/);
  });
});
