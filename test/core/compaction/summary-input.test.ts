import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildSummarizerInput, SUMMARIZER_SYSTEM_PROMPT } from '../../../core/compaction/summary-input';
import { SUMMARY_SECTIONS } from '../../../core/compaction/summary-text';
import { charCount, clipText, excerpt, isErrorLine } from '../../../core/compaction/text-excerpt';
import type { StoredMessage } from '../../../core/messages';
import { estimateTokens } from '../../../core/tokens';
import { truncateForModel } from '../../../core/truncate';

function hasLoneSurrogate(text: string): boolean {
  return /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text);
}

function numbered(count: number, prefix = 'line'): string[] {
  return Array.from({ length: count }, (_, i) => `${prefix} ${i}`);
}

const user = (text: string): StoredMessage => ({ role: 'user', content: [{ type: 'text', text }] });

/** One assistant step: some text, one tool call, and its result. */
function step(id: string, toolName: string, input: unknown, output: string, ok: boolean): StoredMessage[] {
  return [
    {
      role: 'assistant',
      content: [
        { type: 'text', text: `Running ${toolName} (${id}).` },
        { type: 'tool-call', toolCallId: id, toolName, input },
      ],
    },
    {
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: id,
          toolName,
          output: { type: ok ? 'text' : 'error-text', value: output },
        },
      ],
    },
  ];
}

const FAILING = [
  ...numbered(2000, 'ok'),
  'FAIL TestParse: expected "a" got "b"',
  ...numbered(2000, 'ok2'),
  '[exit code 1]',
];

const SPAN: StoredMessage[] = [
  user('Please make the parser tests pass.'),
  ...step('c1', 'file-read', { path: 'parser.go' }, numbered(50).join('\n'), true),
  ...step(
    'c2',
    'file-write',
    { path: 'parser.go', content: 'package parser\n'.repeat(500) },
    'wrote 7500 bytes',
    true,
  ),
  ...step('c3', 'bash', { command: 'go test ./...' }, FAILING.join('\n'), false),
  user('Also keep the public API unchanged.'),
];

describe('SUMMARIZER_SYSTEM_PROMPT', () => {
  it('asks for exactly the six sections as headings, in order, facts only and exact errors', () => {
    const headings = SUMMARIZER_SYSTEM_PROMPT.split('\n').filter((line) => line.startsWith('## '));
    expect(headings).toEqual(SUMMARY_SECTIONS.map((section) => `## ${section}`));
    expect(SUMMARIZER_SYSTEM_PROMPT).toMatch(/Never invent/);
    expect(SUMMARIZER_SYSTEM_PROMPT).toMatch(/exact error strings/);
    expect(SUMMARIZER_SYSTEM_PROMPT).toMatch(/spool/);
  });
});

describe('buildSummarizerInput', () => {
  it('shows the objective, the user and assistant text, tool calls, results, earlier summary and focus', () => {
    const text = buildSummarizerInput({
      objective: 'Fix the parser',
      span: SPAN,
      previousSummary: '## Goal\nFix the parser\n## Current state\nFAIL TestLex',
      focus: 'error handling',
      maxTokens: 50_000,
    });
    expect(text.startsWith('# Objective\nFix the parser\n\n# Focus\n')).toBe(true);
    expect(text).toContain('error handling');
    expect(text).toContain(
      '# Earlier summary to merge\n## Goal\nFix the parser\n## Current state\nFAIL TestLex',
    );
    expect(text).toContain('# Transcript to summarize (11 items)');
    expect(text).toContain('### User\nPlease make the parser tests pass.');
    expect(text).toContain('### User\nAlso keep the public API unchanged.');
    expect(text).toContain('### Assistant\nRunning bash (c3).');
    expect(text).toContain('### Tool call bash [c3]\nargs={"command":"go test ./..."}');
    expect(text).toContain('### Tool result bash [c3] (error)');
    expect(text).toContain('### Tool result file-write [c2] (ok)\nwrote 7500 bytes');
    expect(text).not.toContain('package parser\npackage parser');
    expect(text).toContain('FAIL TestParse: expected "a" got "b"');
    expect(text).toContain('[exit code 1]');
    expect(text).not.toContain('left out');
    expect(text.endsWith('## Next steps, ## References.')).toBe(true);
  });

  it('bounds long outputs per item, keeping head, tail and error lines', () => {
    const text = buildSummarizerInput({ objective: 'o', span: SPAN, maxTokens: 50_000 });
    const result = text.split('### Tool result bash [c3] (error)\n')[1].split('\n\n')[0];
    expect(result.startsWith('ok 0\nok 1')).toBe(true);
    expect(result.endsWith('ok2 1999\n[exit code 1]')).toBe(true);
    expect(result).toContain('FAIL TestParse');
    expect(result).toMatch(/… \d+ lines omitted …/);
    expect(result.length).toBeLessThan(FAILING.join('\n').length / 4);
  });

  it('names the spool copy of a truncated result', () => {
    const shown = truncateForModel(numbered(5000).join('\n'), 12, 2000);
    const span = step('s1', 'grep', { pattern: 'x' }, shown, true);
    expect(buildSummarizerInput({ objective: 'o', span, maxTokens: 10_000 })).toContain(
      '### Tool result grep [s1] (ok, spool:12)',
    );
  });

  it('shrinks every item before dropping any, then drops the oldest and says how many', () => {
    const big = numbered(400).join('\n');
    const span = [
      user(`first request ${big}`),
      ...step('a', 'bash', { command: 'x' }, big, true),
      user('latest request'),
    ];
    const roomy = buildSummarizerInput({ objective: 'o', span, maxTokens: 2_000 });
    expect(estimateTokens(roomy)).toBeLessThanOrEqual(2_000);
    expect(roomy).toContain('first request line 0');
    expect(roomy).toMatch(/… \d+ lines omitted …/);
    expect(roomy).not.toContain('left out');

    const tight = buildSummarizerInput({ objective: 'o', span, maxTokens: 150 });
    expect(estimateTokens(tight)).toBeLessThanOrEqual(150);
    expect(tight).toMatch(
      /\[The oldest \d+ of 5 items of this span were left out to fit the summarizer's window\.\]/,
    );
    expect(tight).toContain('### User\nlatest request');
    expect(tight).not.toContain('first request');
  });

  it('bounds a huge earlier summary and objective to their share', () => {
    const previousSummary = `## Goal\n${numbered(20_000).join('\n')}\n## Current state\nFAIL TestX`;
    const text = buildSummarizerInput({
      objective: 'x'.repeat(100_000),
      span: SPAN,
      previousSummary,
      maxTokens: 8_000,
    });
    expect(estimateTokens(text)).toBeLessThanOrEqual(8_000);
    expect(text).toContain('FAIL TestX');
    expect(text).toContain('### User\nAlso keep the public API unchanged.');
  });

  it('always fits maxTokens, is deterministic and never splits an emoji', () => {
    const textArb = fc.string({ unit: 'binary', maxLength: 3000 });
    const messageArb: fc.Arbitrary<StoredMessage[]> = fc.oneof(
      textArb.map((text) => [user(text)]),
      fc
        .tuple(fc.string({ maxLength: 8 }), textArb, textArb, fc.boolean())
        .map(([id, arg, output, ok]) => step(id, 'bash', { command: arg }, output, ok)),
    );
    fc.assert(
      fc.property(
        fc.array(messageArb, { maxLength: 12 }).map((parts) => parts.flat()),
        fc.integer({ min: 0, max: 6_000 }),
        textArb,
        fc.option(textArb, { nil: undefined }),
        (span, maxTokens, objective, previousSummary) => {
          const options = { objective, span, previousSummary, focus: 'tests', maxTokens };
          const text = buildSummarizerInput(options);
          expect(estimateTokens(text)).toBeLessThanOrEqual(maxTokens);
          expect(buildSummarizerInput(structuredClone(options))).toBe(text);
          expect(hasLoneSurrogate(text)).toBe(false);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('text excerpts', () => {
  it('returns text that fits unchanged, without trailing blank lines', () => {
    expect(excerpt('a\nb\n\n', { maxChars: 100 })).toBe('a\nb');
  });

  it('keeps head and tail with a marker, and error lines from the middle when asked', () => {
    const lines = numbered(1000);
    lines[500] = 'panic: runtime error: index out of range';
    const plain = excerpt(lines.join('\n'), { maxChars: 400 });
    expect(plain.startsWith('line 0\n')).toBe(true);
    expect(plain.endsWith('line 999')).toBe(true);
    expect(plain).not.toContain('panic');
    const withErrors = excerpt(lines.join('\n'), { maxChars: 400, keepErrors: true });
    expect(withErrors).toContain('\npanic: runtime error: index out of range\n');
    expect(withErrors.length).toBeLessThanOrEqual(400);
  });

  it('honours head and tail line counts', () => {
    expect(excerpt(numbered(10).join('\n'), { maxChars: 1000, headLines: 2, tailLines: 1 })).toBe(
      'line 0\nline 1\n… 7 lines omitted …\nline 9',
    );
  });

  it('never exceeds its bound nor splits a surrogate pair', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary', maxLength: 2000 }),
        fc.integer({ min: 0, max: 600 }),
        fc.boolean(),
        (text, maxChars, keepErrors) => {
          const out = excerpt(text, { maxChars, keepErrors });
          expect(out.length).toBeLessThanOrEqual(maxChars);
          expect(hasLoneSurrogate(out)).toBe(false);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('counts characters as code points and clips with an ellipsis', () => {
    expect(charCount('a😀é')).toBe(3);
    expect(charCount('\ud800')).toBe(1);
    expect(clipText('😀😀😀', 4)).toBe('😀…');
    expect(clipText('abc', 3)).toBe('abc');
    expect(isErrorLine('TypeError: x is undefined')).toBe(true);
    expect(isErrorLine('ok  	pkg/foo	0.01s')).toBe(false);
  });
});
