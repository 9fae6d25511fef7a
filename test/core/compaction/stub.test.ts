import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  argsDigest,
  elidedArgText,
  elideLargeArgs,
  isStub,
  renderStub,
  renderStubbedToolResult,
  STUB_PREFIX,
} from '../../../core/compaction/stub';
import {
  DIGEST_MAX_CHARS,
  STUB_EDGE_LINE_CHARS,
  STUB_EXCERPT_MAX_CHARS,
} from '../../../core/compaction/text-limits';
import type { ToolResultPart } from '../../../core/messages';
import { truncateForModel } from '../../../core/truncate';

/** Whether a string holds a surrogate half without its partner (unstorable in jsonb). */
function hasLoneSurrogate(text: string): boolean {
  return /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text);
}

/** A `go test` output of exactly 1204 lines and 48210 characters, failing at the end. */
function goTestOutput(): string {
  const first = `=== RUN   TestAgentLoop ${'-'.repeat(102 - 24)}`;
  const middle = Array.from(
    { length: 1202 },
    (_, i) => `    agent_test.go:${String(i).padStart(4, '0')}: step ok .......`,
  );
  return [first, ...middle, 'FAIL spettro/internal/agent'].join('\n');
}

const SPOOLED =
  /^\[output elided: (\d+\+?) chars, spool:(\d+) — re-read with tool-output \{"id":"spool:(\d+)"\}\] (\S+) args=(.*) — (\d+) lines?, status (ok|error), head: (".*"), tail: (".*")$/;

describe('renderStub with a spool copy', () => {
  it('has exactly the format of the spec example', () => {
    const output = goTestOutput();
    expect(output.length).toBe(48210);
    const stub = renderStub({
      toolName: 'bash',
      args: { command: 'go test ./...' },
      output,
      ok: false,
      spoolId: 7,
    });
    const head = output.split('\n')[0];
    expect(stub).toBe(
      `[output elided: 48210 chars, spool:7 — re-read with tool-output {"id":"spool:7"}] bash args={"command":"go test ./..."} — 1204 lines, status error, head: ${JSON.stringify(head)}, tail: "FAIL spettro/internal/agent"`,
    );
    expect(stub).toMatch(SPOOLED);
    expect(isStub(stub)).toBe(true);
  });

  it('says ok, counts one line in the singular, and ignores a trailing newline', () => {
    const stub = renderStub({
      toolName: 'grep',
      args: { pattern: 'x' },
      output: 'only line\n',
      ok: true,
      spoolId: 2,
    });
    expect(stub).toBe(
      '[output elided: 10 chars, spool:2 — re-read with tool-output {"id":"spool:2"}] grep args={"pattern":"x"} — 1 line, status ok, head: "only line", tail: "only line"',
    );
    expect(renderStub({ toolName: 'glob', args: {}, output: '', ok: true, spoolId: 3 })).toContain(
      '— 0 lines, status ok, head: "", tail: ""',
    );
  });

  it('quotes head and tail as JSON and skips blank edge lines', () => {
    const output = '\n\n  "quoted" \\ back\tslash\nmiddle\nlast "one"\n\n';
    const match = SPOOLED.exec(renderStub({ toolName: 'bash', args: {}, output, ok: true, spoolId: 1 }));
    expect(match).not.toBeNull();
    expect(JSON.parse(match![8])).toBe('  "quoted" \\ back\tslash');
    expect(JSON.parse(match![9])).toBe('last "one"');
  });

  it('clips long edge lines without splitting an emoji, and counts characters, not UTF-16 units', () => {
    const line = `a${'😀'.repeat(200)}`;
    const stub = renderStub({ toolName: 'bash', args: {}, output: line, ok: true, spoolId: 4 });
    const match = SPOOLED.exec(stub)!;
    expect(match[1]).toBe('201');
    const head = JSON.parse(match[8]) as string;
    expect(head.length).toBeLessThanOrEqual(STUB_EDGE_LINE_CHARS);
    expect(head.endsWith('…')).toBe(true);
    expect(hasLoneSurrogate(head)).toBe(false);
    expect(hasLoneSurrogate(stub)).toBe(false);
  });

  it('reads the line count and spool id from a truncation footer and never quotes the footer', () => {
    const full = Array.from({ length: 3000 }, (_, i) => `row ${i}`).join('\n');
    const shown = truncateForModel(full, 9, 1000);
    const stub = renderStub({ toolName: 'file-read', args: { path: 'a.txt' }, output: shown, ok: true });
    const match = SPOOLED.exec(stub)!;
    expect(match[2]).toBe('9');
    expect(match[6]).toBe('3000');
    expect(match[1].endsWith('+')).toBe(true);
    expect(match[9]).not.toContain('truncated');
    const sized = renderStub({
      toolName: 'file-read',
      args: {},
      output: shown,
      ok: true,
      totalChars: full.length,
    });
    expect(sized.startsWith(`[output elided: ${full.length} chars, spool:9`)).toBe(true);
  });

  it('is deterministic: equal inputs give the identical stub', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary', maxLength: 400 }),
        fc.dictionary(fc.string({ maxLength: 5 }), fc.string({ unit: 'binary', maxLength: 200 })),
        fc.boolean(),
        fc.option(fc.nat(1000), { nil: undefined }),
        (output, args, ok, spoolId) => {
          const first = renderStub({ toolName: 'bash', args, output, ok, spoolId });
          const second = renderStub({ toolName: 'bash', args: structuredClone(args), output, ok, spoolId });
          expect(second).toBe(first);
          expect(first.startsWith(STUB_PREFIX)).toBe(true);
          expect(hasLoneSurrogate(first)).toBe(false);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('renderStub without a spool copy', () => {
  const lines = Array.from({ length: 300 }, (_, i) => `line ${i}`);
  lines[150] = 'src/agent.ts(12,3): error TS2322: Type "x" is not assignable';

  it('says so and carries a bounded head/tail excerpt that keeps error lines', () => {
    const output = lines.join('\n');
    const stub = renderStub({ toolName: 'bash', args: { command: 'tsc' }, output, ok: false });
    const [first, ...rest] = stub.split('\n');
    expect(first).toBe(
      `[output elided: ${output.length} chars, no spool copy] bash args={"command":"tsc"} — 300 lines, status error, excerpt:`,
    );
    const gist = rest.join('\n');
    expect(gist.length).toBeLessThanOrEqual(STUB_EXCERPT_MAX_CHARS);
    expect(rest.slice(0, 5)).toEqual(['line 0', 'line 1', 'line 2', 'line 3', 'line 4']);
    expect(rest.slice(-5)).toEqual(['line 295', 'line 296', 'line 297', 'line 298', 'line 299']);
    expect(gist).toContain(lines[150]);
    expect(gist).toMatch(/… \d+ lines omitted …/);
    expect(renderStub({ toolName: 'bash', args: { command: 'tsc' }, output, ok: false })).toBe(stub);
  });

  it('keeps a short output whole', () => {
    const stub = renderStub({ toolName: 'bash', args: {}, output: 'a\nb\nc', ok: true });
    expect(stub).toBe(
      '[output elided: 5 chars, no spool copy] bash args={} — 3 lines, status ok, excerpt:\na\nb\nc',
    );
  });

  it('bounds a single enormous line and never splits an emoji', () => {
    const stub = renderStub({ toolName: 'bash', args: {}, output: '😀'.repeat(100_000), ok: true });
    expect(stub.length).toBeLessThan(STUB_EXCERPT_MAX_CHARS + 200);
    expect(stub).toContain('[output elided: 100000 chars, no spool copy]');
    expect(hasLoneSurrogate(stub)).toBe(false);
  });
});

describe('argsDigest', () => {
  it('is compact JSON with long strings clipped to their start and size', () => {
    const content = 'x'.repeat(5000);
    expect(argsDigest({ path: 'a.ts', content })).toBe(
      `{"path":"a.ts","content":"${'x'.repeat(60)}…(5000 chars)"}`,
    );
    expect(argsDigest({ command: 'y'.repeat(80) })).toBe(`{"command":"${'y'.repeat(80)}"}`);
  });

  it('clips nested strings, caps the whole digest, and handles odd inputs', () => {
    expect(argsDigest({ a: [{ b: 'z'.repeat(100) }] })).toBe(`{"a":[{"b":"${'z'.repeat(60)}…(100 chars)"}]}`);
    const wide = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`key${i}`, i]));
    const digest = argsDigest(wide);
    expect(digest.length).toBe(DIGEST_MAX_CHARS);
    expect(digest.endsWith('…')).toBe(true);
    expect(argsDigest(undefined)).toBe('null');
    expect(argsDigest('not json {')).toBe('"not json {"');
    expect(argsDigest(JSON.parse('{"__proto__":{"x":1}}'))).toBe('{"__proto__":{"x":1}}');
  });

  it('never splits an emoji when clipping', () => {
    const digest = argsDigest({ text: '😀'.repeat(100) });
    expect(hasLoneSurrogate(digest)).toBe(false);
    expect(digest).toContain('…(100 chars)');
  });
});

describe('renderStubbedToolResult', () => {
  const part: ToolResultPart = {
    type: 'tool-result',
    toolCallId: 'call-1',
    toolName: 'bash',
    output: { type: 'error-text', value: 'boom\n[exit code 1]' },
  };

  it('returns a new part with the stub, the same ids and the same output type', () => {
    const stubbed = renderStubbedToolResult(part, { args: { command: 'make' }, spoolId: 5 });
    expect(stubbed).toEqual({
      type: 'tool-result',
      toolCallId: 'call-1',
      toolName: 'bash',
      output: {
        type: 'error-text',
        value:
          '[output elided: 18 chars, spool:5 — re-read with tool-output {"id":"spool:5"}] bash args={"command":"make"} — 2 lines, status error, head: "boom", tail: "[exit code 1]"',
      },
    });
    expect(part.output.value).toBe('boom\n[exit code 1]');
  });

  it('leaves an existing stub as it is', () => {
    const once = renderStubbedToolResult(part, { args: {}, spoolId: 5 });
    expect(renderStubbedToolResult(once, { args: { other: 1 }, spoolId: 6 })).toEqual(once);
  });
});

describe('elideLargeArgs', () => {
  it('replaces strings over the limit, at any depth, and leaves the input alone', () => {
    const input = {
      path: 'src/big.ts',
      content: 'é'.repeat(3000),
      nested: { list: ['short', 'q'.repeat(2001)] },
    };
    const copy = structuredClone(input);
    expect(elideLargeArgs(input, 2000)).toEqual({
      path: 'src/big.ts',
      content: elidedArgText(3000),
      nested: { list: ['short', '[elided: 2001 chars; the full call is in the transcript]'] },
    });
    expect(input).toEqual(copy);
  });

  it('counts characters, keeps strings at the limit, and passes non-strings through', () => {
    expect(elideLargeArgs('😀'.repeat(10), 10)).toBe('😀'.repeat(10));
    expect(elideLargeArgs('😀'.repeat(11), 10)).toBe(elidedArgText(11));
    expect(elideLargeArgs({ n: 1, b: true, z: null }, 0)).toEqual({ n: 1, b: true, z: null });
    const once = elideLargeArgs({ content: 'x'.repeat(500) }, 100);
    expect(elideLargeArgs(once, 100)).toEqual(once);
  });
});
