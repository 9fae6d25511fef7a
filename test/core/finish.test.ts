import { describe, expect, it } from 'vitest';
import { finishToolSpec, parseFinishArgs } from '../../core/finish';

const FINISH_TOOL_SPEC = finishToolSpec();
/** The offered schema's fields, as the tests read them. */
const FINISH_FIELDS = FINISH_TOOL_SPEC.inputSchema.properties as Record<string, { enum?: unknown[] }>;

const PREFIX = 'invalid arguments for finish: ';
const NOT_AN_OBJECT = `${PREFIX}expected an object with status and summary`;
const BAD_SUMMARY = 'summary: expected a non-empty string';

/** The error text of arguments that must be rejected. */
function errorOf(input: unknown): string {
  const result = parseFinishArgs(input);
  if (result.ok) throw new Error(`expected ${JSON.stringify(input)} to be rejected`);
  return result.error;
}

describe('FINISH_TOOL_SPEC', () => {
  it('requires exactly status and summary, status being complete or blocked', () => {
    expect(FINISH_TOOL_SPEC.name).toBe('finish');
    expect(FINISH_TOOL_SPEC.inputSchema.required).toEqual(['status', 'summary']);
    expect(FINISH_FIELDS.status.enum).toEqual(['complete', 'blocked']);
    expect(FINISH_TOOL_SPEC.inputSchema.additionalProperties).toBe(false);
    // Generated from the zod schema that validates the calls, without the dialect line.
    expect(FINISH_TOOL_SPEC.inputSchema).not.toHaveProperty('$schema');
    expect(FINISH_FIELDS.summary).toMatchObject({
      type: 'string',
      description: expect.stringContaining('verified'),
    });
  });
});

describe('parseFinishArgs', () => {
  it.each(['complete', 'blocked'] as const)('accepts status %s with a summary', (status) => {
    expect(parseFinishArgs({ status, summary: 'did it' })).toEqual({
      ok: true,
      args: { status, summary: 'did it' },
    });
  });

  it('accepts a JSON string, as a model may send its arguments unparsed', () => {
    expect(parseFinishArgs('{"status":"blocked","summary":"need an API key"}')).toEqual({
      ok: true,
      args: { status: 'blocked', summary: 'need an API key' },
    });
  });

  it('keeps the summary as given (not trimmed) and drops unknown fields', () => {
    const result = parseFinishArgs({ status: 'complete', summary: '  done\n', extra: 1 });
    expect(result).toEqual({ ok: true, args: { status: 'complete', summary: '  done\n' } });
  });

  it('rejects a string that is not JSON, quoting the parser', () => {
    const error = errorOf('{status: complete}');
    expect(error.startsWith(`${PREFIX}not valid JSON (`)).toBe(true);
    expect(error.endsWith(')')).toBe(true);
    expect(errorOf('')).toMatch(/^invalid arguments for finish: not valid JSON \(.+\)$/);
  });

  it.each([
    ['null', null],
    ['undefined', undefined],
    ['a number', 42],
    ['a boolean', true],
    ['an array', [{ status: 'complete', summary: 'x' }]],
    ['a JSON string of a string', '"complete"'],
    ['a JSON string of null', 'null'],
    ['a JSON string of an array', '[]'],
  ])('rejects %s as not an object', (_name, input) => {
    expect(errorOf(input)).toBe(NOT_AN_OBJECT);
  });

  it('names a missing status', () => {
    expect(errorOf({ summary: 'x' })).toBe(
      `${PREFIX}status: expected "complete" or "blocked", received undefined`,
    );
  });

  it('quotes a wrong status as JSON', () => {
    expect(errorOf({ status: 'done', summary: 'x' })).toBe(
      `${PREFIX}status: expected "complete" or "blocked", received "done"`,
    );
    // Case matters: the model must use the exact enum value.
    expect(errorOf({ status: 'Complete', summary: 'x' })).toBe(
      `${PREFIX}status: expected "complete" or "blocked", received "Complete"`,
    );
    expect(errorOf({ status: 1, summary: 'x' })).toBe(
      `${PREFIX}status: expected "complete" or "blocked", received 1`,
    );
    expect(errorOf({ status: null, summary: 'x' })).toBe(
      `${PREFIX}status: expected "complete" or "blocked", received null`,
    );
  });

  it.each([
    ['missing', undefined],
    ['empty', ''],
    ['blank', ' \n\t '],
    ['not a string', 42],
    ['an object', { text: 'x' }],
  ])('rejects a summary that is %s', (_name, summary) => {
    expect(errorOf({ status: 'complete', summary })).toBe(`${PREFIX}${BAD_SUMMARY}`);
  });

  it('lists every problem, status first, separated by "; "', () => {
    expect(errorOf({})).toBe(
      `${PREFIX}status: expected "complete" or "blocked", received undefined; ${BAD_SUMMARY}`,
    );
    expect(errorOf('{"status":"ok","summary":""}')).toBe(
      `${PREFIX}status: expected "complete" or "blocked", received "ok"; ${BAD_SUMMARY}`,
    );
  });
});
