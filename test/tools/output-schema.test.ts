/**
 * `--output-schema` with ajv used fully (issue 31): formats are checked (ajv-formats), the draft is the
 * one `$schema` declares (draft-07 and 2020-12, which zod writes, both accepted), and a schema that is
 * invalid or of an unknown draft is a problem the CLI reports before the goal starts.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { checkFinishResult, outputSchemaProblem } from '../../activities/output-schema';
import { parseFinishArgs } from '../../core/finish';
import { cliEnv, runCli, scriptedModel, tempDir } from '../support/cli';

/** The finish call's verdict on `result` against `schema`. */
function check(schema: Record<string, unknown>, result: unknown) {
  const input = { status: 'complete', summary: 'done', result };
  return checkFinishResult(parseFinishArgs(input), input, schema);
}

describe('output schema formats', () => {
  const schema = {
    type: 'object',
    properties: { at: { type: 'string', format: 'date-time' }, mail: { type: 'string', format: 'email' } },
    required: ['at'],
  };

  it('checks date-time and email', () => {
    expect(check(schema, { at: '2026-12-03T05:00:00Z', mail: 'a@example.com' }).ok).toBe(true);
    const bad = check(schema, { at: 'yesterday', mail: 'nobody' });
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.error).toMatch(/result\.at must match format "date-time"/);
    expect(!bad.ok && bad.error).toMatch(/result\.mail must match format "email"/);
  });

  it('accepts formats it does not know, without a word on the console (zod writes them beside a pattern)', () => {
    const warnings: unknown[] = [];
    const warn = console.warn;
    console.warn = (...args: unknown[]) => warnings.push(args);
    try {
      const cuid = { type: 'string', format: 'cuid', pattern: '^c[0-9a-z]{6,}$' };
      expect(outputSchemaProblem(cuid)).toBeNull();
      expect(check(cuid, 'cabc1234').ok).toBe(true);
      expect(check(cuid, 'nope').ok).toBe(false);
    } finally {
      console.warn = warn;
    }
    expect(warnings).toEqual([]);
  });
});

describe('output schema drafts', () => {
  it('accepts the 2020-12 schema zod writes, and checks with its keywords (prefixItems)', () => {
    const schema = z.toJSONSchema(
      z.object({ id: z.uuid(), when: z.iso.datetime(), pair: z.tuple([z.string(), z.number()]) }),
    ) as Record<string, unknown>;
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(outputSchemaProblem(schema)).toBeNull();
    const good = { id: '6f1c0d9e-8b7a-4c2d-9e1f-0a1b2c3d4e5f', when: '2026-12-03T05:00:00Z', pair: ['a', 1] };
    expect(check(schema, good).ok).toBe(true);
    const bad = check(schema, { ...good, pair: [1, 'a'], when: 'soon' });
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.error).toMatch(/result\.pair\.0 must be string/);
    expect(!bad.ok && bad.error).toMatch(/result\.when must match format "date-time"/);
  });

  it('accepts draft-07 (declared or not), draft-06 and 2019-09', () => {
    const properties = { n: { type: 'integer', minimum: 1 } };
    for (const $schema of [
      undefined,
      'http://json-schema.org/draft-07/schema#',
      'http://json-schema.org/draft-06/schema#',
      'https://json-schema.org/draft/2019-09/schema',
    ]) {
      const schema = { ...($schema ? { $schema } : {}), type: 'object', properties };
      expect(outputSchemaProblem(schema), String($schema)).toBeNull();
      expect(check(schema, { n: 0 }).ok).toBe(false);
      expect(check(schema, { n: 2 }).ok).toBe(true);
    }
  });

  it('names an unknown draft and an invalid schema', () => {
    expect(
      outputSchemaProblem({ $schema: 'http://json-schema.org/draft-04/schema#', type: 'object' }),
    ).toMatch(
      /\$schema "http:\/\/json-schema.org\/draft-04\/schema#" is not a supported draft \(supported: draft-06, draft-07, 2019-09 and 2020-12/,
    );
    expect(outputSchemaProblem({ type: 'strin' })).toMatch(/schema is invalid: data\/type must be/);
    expect(
      outputSchemaProblem({ $schema: 'https://json-schema.org/draft/2020-12/schema', required: 'a' }),
    ).toMatch(/schema is invalid/);
    expect(outputSchemaProblem({ $ref: '#/$defs/missing' })).toMatch(/can't resolve reference/);
    expect(outputSchemaProblem([])).toBe('it is not a JSON object');
  });
});

describe('goalrun start --output-schema', () => {
  const dir = tempDir('output-schema');
  // Nothing listens there: a schema that passes the start-up check fails next, on Temporal.
  const env = cliEnv({ GOALRUN_HOME: dir, TEMPORAL_ADDRESS: '127.0.0.1:1' });
  const start = (schema: unknown) => {
    const file = path.join(dir, `schema-${Math.random().toString(36).slice(2)}.json`);
    fs.writeFileSync(file, JSON.stringify(schema));
    const model = scriptedModel(dir, []);
    return runCli(['start', 'x', '--workspace', dir, '--model', model, '--output-schema', file], env);
  };

  it('exits 2 naming the problem for a schema of an unknown draft', async () => {
    const result = await start({ $schema: 'http://json-schema.org/draft-04/schema#', type: 'object' });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /--output-schema: .* is not a usable JSON Schema: \$schema .* is not a supported draft/,
    );
  });

  it('accepts the 2020-12 schema zod writes (the start fails later, on Temporal, not on the schema)', async () => {
    const result = await start(z.toJSONSchema(z.object({ when: z.iso.datetime() })));
    expect(result.stderr).not.toMatch(/output-schema/);
    expect(result.stderr).toMatch(/nothing answers at 127\.0\.0\.1:1/);
  });
});
