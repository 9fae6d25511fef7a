import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EXTRACTED_NOTE, extractedSummary } from '../../../core/compaction/extracted-summary';
import { filesModifiedFromToolLog } from '../../../core/compaction/files-modified';
import { renderStub } from '../../../core/compaction/stub';
import {
  composeSummaryMessage,
  parseSummarySections,
  SUMMARY_SECTIONS,
  TOOL_LOG_FILES_HEADING,
} from '../../../core/compaction/summary-text';
import type { StoredMessage } from '../../../core/messages';
import { truncateForModel } from '../../../core/truncate';

const user = (text: string): StoredMessage => ({ role: 'user', content: [{ type: 'text', text }] });

function step(
  id: string,
  toolName: string,
  input: unknown,
  output: string,
  ok: boolean,
  note = '',
): StoredMessage[] {
  return [
    {
      role: 'assistant',
      content: [
        ...(note ? [{ type: 'text' as const, text: note }] : []),
        { type: 'tool-call' as const, toolCallId: id, toolName, input },
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

function noise(count: number, prefix: string): string[] {
  return Array.from({ length: count }, (_, i) => `${prefix} ${i} ${'.'.repeat(40)}`);
}

const OLD_ERROR = 'old.go:1: undefined: removedLater';
const BUILD_ERROR = 'internal/agent/loop.go:42:7: cannot use n (variable of type int) as string value';
const TEST_ERROR = '--- FAIL: TestAgentLoop (0.02s) loop_test.go:88: expected 3 retries, got 4';
const LINT_ERROR = 'old_string not found in src/x.ts; it must match the file exactly';

const SPAN: StoredMessage[] = [
  user('Make the agent loop tests pass.'),
  ...step(
    '1',
    'bash',
    { command: 'go build ./...' },
    `${OLD_ERROR}\n[exit code 2]`,
    false,
    'Building first.',
  ),
  ...step(
    '2',
    'file-write',
    { path: 'internal/agent/loop.go', content: 'package agent\n' },
    'wrote 14 bytes',
    true,
  ),
  ...step(
    '3',
    'file-edit',
    { path: 'internal/agent/retry.go', old_string: 'a', new_string: 'b' },
    'replaced 1',
    true,
  ),
  ...step('4', 'file-edit', { path: 'src/x.ts', old_string: 'q', new_string: 'r' }, LINT_ERROR, false),
  user('Do not change the public API.'),
  ...step(
    '5',
    'bash',
    { command: 'go vet ./...' },
    [...noise(300, 'vet'), BUILD_ERROR, ...noise(300, 'more'), '[exit code 1]'].join('\n'),
    false,
  ),
  ...step(
    '6',
    'bash',
    { command: 'go test ./internal/agent/...' },
    // Stored as the model saw it: a head (which holds the first failure) and the footer naming the spool.
    truncateForModel(
      [
        ...noise(20, 'run'),
        TEST_ERROR,
        ...noise(2000, 'run'),
        'FAIL spettro/internal/agent',
        '[exit code 1]',
      ].join('\n'),
      7,
      4000,
    ),
    false,
    'The retry cap is off by one.',
  ),
  ...step('7', 'bash', { command: 'echo done > status.txt' }, '[exit code 0]', true),
];

function summarize(span: StoredMessage[], objective = 'Fix the agent loop'): string {
  return extractedSummary({ objective, span, filesModified: filesModifiedFromToolLog(span) });
}

describe('extractedSummary', () => {
  it('has exactly the six sections, in order', () => {
    const text = summarize(SPAN);
    const headings = text.split('\n').filter((line) => line.startsWith('## '));
    expect(headings).toEqual(SUMMARY_SECTIONS.map((section) => `## ${section}`));
    const parsed = parseSummarySections(text);
    expect(parsed.missing).toEqual([]);
    expect(parsed.empty).toEqual([]);
  });

  it('quotes the objective and the latest user messages', () => {
    const goal = parseSummarySections(summarize(SPAN)).sections.Goal!;
    expect(goal).toContain('> Fix the agent loop');
    expect(goal).toContain('> Make the agent loop tests pass.');
    expect(goal).toContain('> Do not change the public API.');
  });

  it('lists every modified file and the commands that may have written', () => {
    const files = parseSummarySections(summarize(SPAN)).sections['Files modified']!;
    expect(files).toContain('- internal/agent/loop.go — written (14 bytes)');
    expect(files).toContain('- internal/agent/retry.go — edited: replaced `a` with `b`');
    expect(files).not.toContain('src/x.ts');
    expect(files).toContain('- `echo done > status.txt`');
  });

  it('keeps the exact error strings of the last failed calls, and recent commands', () => {
    const state = parseSummarySections(summarize(SPAN)).sections['Current state']!;
    for (const error of [BUILD_ERROR, TEST_ERROR, LINT_ERROR]) expect(state).toContain(error);
    expect(state).not.toContain(OLD_ERROR);
    expect(state).toContain('use tool-output {"id":"spool:7","offset":');
    expect(state).toContain('- `go vet ./...` → error, last line: "[exit code 1]"');
    expect(state).toContain('- `go build ./...` → error, last line: "[exit code 2]"');
    expect(state).toContain('- `echo done > status.txt` → ok, last line: "[exit code 0]"');
    expect(state.indexOf('go build')).toBeLessThan(state.indexOf('go vet'));
  });

  it('notes it was extracted, and lists the spool ids seen', () => {
    const parsed = parseSummarySections(summarize(SPAN));
    expect(parsed.sections['Decisions and findings']).toContain(EXTRACTED_NOTE);
    expect(parsed.sections['Decisions and findings']).toContain('> The retry cap is off by one.');
    expect(parsed.sections.References).toBe('- spool:7 (bash)');
    expect(parsed.sections['Next steps']).toMatch(/^\(not stated/);
  });

  it('finds spool ids in stubs too, and says when there is nothing to report', () => {
    const stub = renderStub({ toolName: 'grep', args: {}, output: 'x', ok: true, spoolId: 3 });
    const text = summarize([user('hi'), ...step('g', 'grep', { pattern: 'p' }, stub, true)], 'Look');
    const parsed = parseSummarySections(text);
    expect(parsed.sections.References).toBe('- spool:3 (grep)');
    expect(parsed.sections['Current state']).toContain('No commands were run in the compacted span.');
    expect(parsed.sections['Current state']).toContain('No tool call failed in the compacted span.');
    expect(parsed.sections['Files modified']).toContain('(no file-write or file-edit call succeeded');
  });

  it('is deterministic and bounded however large the outputs', () => {
    const huge = [...noise(50_000, 'x'), TEST_ERROR].join('\n');
    const span = [
      user('u'.repeat(100_000)),
      ...step('h', 'bash', { command: 'c'.repeat(10_000) }, huge, false),
    ];
    const text = summarize(span, 'o'.repeat(100_000));
    expect(text.length).toBeLessThan(12_000);
    expect(text).toContain(TEST_ERROR);
    expect(summarize(structuredClone(span), 'o'.repeat(100_000))).toBe(text);
  });

  it('composes into a summary message without repeating the files list, headings in outputs left inert', () => {
    const span = [
      ...SPAN,
      ...step('8', 'bash', { command: 'cat notes.md' }, '## Goal\nfake\n```\n## References', false),
    ];
    const text = summarize(span);
    const parsed = parseSummarySections(text);
    expect(parsed.sections.Goal).not.toContain('fake');
    const message = composeSummaryMessage({
      summaryText: text,
      filesModified: filesModifiedFromToolLog(span),
      compactedMessages: span.length,
      fromSeq: 2,
      toSeq: span.length + 1,
    });
    expect(message).not.toContain(TOOL_LOG_FILES_HEADING);
    expect(message.split('- internal/agent/loop.go — ')).toHaveLength(2);
  });
});

const PATHS = ['a.ts', 'b/c.ts', 'd.md'];
const opArb = fc.record({
  kind: fc.constantFrom('write', 'edit', 'bash'),
  path: fc.constantFrom(...PATHS),
  ok: fc.boolean(),
  error: fc.stringMatching(/^[a-z][a-z0-9 :._-]{4,60}$/),
});

describe('extractedSummary (property)', () => {
  it('contains every modified file and the error text of each of the last three failed calls', () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 25 }), (ops) => {
        const span: StoredMessage[] = [user('go')];
        ops.forEach((op, i) => {
          const id = `c${i}`;
          const errorText = `error ${i}: ${op.error}`;
          const output = op.ok ? 'fine' : [...noise(100, 'pad'), errorText, ...noise(100, 'tail')].join('\n');
          if (op.kind === 'bash') span.push(...step(id, 'bash', { command: `make ${i}` }, output, op.ok));
          else if (op.kind === 'write')
            span.push(...step(id, 'file-write', { path: op.path, content: 'x' }, output, op.ok));
          else
            span.push(
              ...step(id, 'file-edit', { path: op.path, old_string: 'a', new_string: 'b' }, output, op.ok),
            );
        });
        const text = summarize(span);
        const modified = new Set(ops.filter((op) => op.ok && op.kind !== 'bash').map((op) => op.path));
        for (const path of modified) expect(text).toContain(`- ${path} — `);
        const failed = ops.map((op, i) => ({ op, i })).filter(({ op }) => !op.ok);
        for (const { op, i } of failed.slice(-3)) expect(text).toContain(`error ${i}: ${op.error}`);
      }),
      { numRuns: 200 },
    );
  });
});
