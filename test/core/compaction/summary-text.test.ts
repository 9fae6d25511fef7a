import { describe, expect, it } from 'vitest';
import { type FilesModified, renderFilesModified } from '../../../core/compaction/files-modified';
import {
  composeSummaryMessage,
  isUsableSummary,
  NOT_STATED,
  normalizeSummary,
  parseSummarySections,
  SUMMARY_SECTIONS,
  summaryHeader,
  TOOL_LOG_FILES_HEADING,
} from '../../../core/compaction/summary-text';

const FULL = [
  '## Goal',
  'Make the agent tests pass.',
  '## Decisions and findings',
  'The loop retried forever.',
  '## Files modified',
  '- internal/agent/loop.go — added a retry cap',
  '## Current state',
  'FAIL TestAgentLoop: expected 3 retries, got 4',
  '## Next steps',
  '1. Fix the off-by-one.',
  '## References',
  '- spool:7 (go test output)',
].join('\n');

const FILES: FilesModified = {
  files: [
    { path: 'internal/agent/loop.go', changes: ['edited: replaced `n <= max` with `n < max`'] },
    { path: 'internal/agent/loop_test.go', changes: ['written (812 bytes)'] },
  ],
  possiblyChangedByCommands: ['gofmt -w .'],
};

describe('parseSummarySections', () => {
  it('finds all six sections of a well-formed summary', () => {
    const parsed = parseSummarySections(FULL);
    expect(parsed.missing).toEqual([]);
    expect(parsed.empty).toEqual([]);
    expect(parsed.preamble).toBe('');
    expect(parsed.sections['Current state']).toBe('FAIL TestAgentLoop: expected 3 retries, got 4');
    expect(Object.keys(parsed.sections)).toEqual([...SUMMARY_SECTIONS]);
  });

  it('accepts heading variants models write', () => {
    const text = [
      'Here is the summary.',
      '# Goal',
      'g',
      '### decisions and findings:',
      'd',
      '**Files modified**',
      'f',
      '**Current state:**',
      's',
      '## Next Steps ##',
      'n',
    ].join('\r\n');
    const parsed = parseSummarySections(text);
    expect(parsed.preamble).toBe('Here is the summary.');
    expect(parsed.missing).toEqual(['References']);
    expect(parsed.sections).toEqual({
      Goal: 'g',
      'Decisions and findings': 'd',
      'Files modified': 'f',
      'Current state': 's',
      'Next steps': 'n',
    });
  });

  it('reports missing and empty sections in canonical order', () => {
    const parsed = parseSummarySections('## References\n\n## Goal\nx\n## Next steps\n   \n');
    expect(parsed.missing).toEqual(['Decisions and findings', 'Files modified', 'Current state']);
    expect(parsed.empty).toEqual(['Next steps', 'References']);
  });

  it('merges a repeated section and keeps unknown headings inside the section they follow', () => {
    const parsed = parseSummarySections('## Goal\na\n## Notes\nb\n## Goal\nc');
    expect(parsed.sections.Goal).toBe('a\n## Notes\nb\n\nc');
  });

  it('ignores headings inside code blocks', () => {
    const text = '## Current state\n````\n## Goal\n```\nstill code\n````\nafter\n## Goal\nreal';
    const parsed = parseSummarySections(text);
    expect(parsed.sections['Current state']).toBe('````\n## Goal\n```\nstill code\n````\nafter');
    expect(parsed.sections.Goal).toBe('real');
  });
});

describe('isUsableSummary and normalizeSummary', () => {
  it('rejects a reply with none of the sections, accepts one with any', () => {
    expect(isUsableSummary(parseSummarySections('I could not summarize this.'))).toBe(false);
    expect(isUsableSummary(parseSummarySections(''))).toBe(false);
    expect(isUsableSummary(parseSummarySections('## Goal\n'))).toBe(false);
    expect(isUsableSummary(parseSummarySections('## Goal\nx'))).toBe(true);
  });

  it('writes the six sections in order, missing ones as not stated', () => {
    expect(normalizeSummary(parseSummarySections('## Next steps\nrun tests\n## Goal\nship'))).toBe(
      [
        '## Goal\nship',
        `## Decisions and findings\n${NOT_STATED}`,
        `## Files modified\n${NOT_STATED}`,
        `## Current state\n${NOT_STATED}`,
        '## Next steps\nrun tests',
        `## References\n${NOT_STATED}`,
      ].join('\n\n'),
    );
  });
});

describe('summaryHeader', () => {
  it('names the compacted messages and the focus', () => {
    expect(summaryHeader(12, 87, 76)).toBe('[goalrun] Summary of messages 12–87 (compacted: 76 messages)');
    expect(summaryHeader(3, 3, 1, ' auth\nmiddleware ')).toBe(
      '[goalrun] Summary of messages 3–3 (compacted: 1 message; focus: auth\\nmiddleware)',
    );
    expect(summaryHeader(1, 2, 2, '   ')).toBe('[goalrun] Summary of messages 1–2 (compacted: 2 messages)');
  });
});

describe('composeSummaryMessage', () => {
  it('is the header, the six sections and the files list from the tool log', () => {
    const text = composeSummaryMessage({
      summaryText: FULL,
      filesModified: FILES,
      compactedMessages: 40,
      fromSeq: 5,
      toSeq: 44,
      topic: 'retries',
    });
    expect(text).toBe(
      [
        '[goalrun] Summary of messages 5–44 (compacted: 40 messages; focus: retries)',
        normalizeSummary(parseSummarySections(FULL)),
        `${TOOL_LOG_FILES_HEADING}\n${renderFilesModified(FILES)}`,
      ].join('\n\n'),
    );
    expect(text).toContain('- internal/agent/loop_test.go — written (812 bytes)');
    expect(text).toContain('- `gofmt -w .`');
    expect(parseSummarySections(text).missing).toEqual([]);
  });

  it('adds missing sections as not stated and still lists every file the model forgot', () => {
    const text = composeSummaryMessage({
      summaryText: '## Goal\nship it\n## Files modified\n- nothing, I think',
      filesModified: FILES,
      compactedMessages: 3,
      fromSeq: 1,
      toSeq: 3,
    });
    const parsed = parseSummarySections(text);
    expect(parsed.missing).toEqual([]);
    expect(parsed.sections['Current state']).toBe(NOT_STATED);
    for (const file of FILES.files) expect(text).toContain(`- ${file.path} — `);
  });

  it('does not repeat the list when the Files modified section already holds it', () => {
    const summaryText = FULL.replace(
      '- internal/agent/loop.go — added a retry cap',
      renderFilesModified(FILES),
    );
    const text = composeSummaryMessage({
      summaryText,
      filesModified: FILES,
      compactedMessages: 2,
      fromSeq: 1,
      toSeq: 2,
    });
    expect(text).not.toContain(TOOL_LOG_FILES_HEADING);
    expect(text.split('- internal/agent/loop.go — ')).toHaveLength(2);
  });

  it('is deterministic', () => {
    const input = { summaryText: FULL, filesModified: FILES, compactedMessages: 9, fromSeq: 2, toSeq: 10 };
    expect(composeSummaryMessage(input)).toBe(composeSummaryMessage(structuredClone(input)));
  });
});
