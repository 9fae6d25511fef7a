/**
 * Carrying the earlier summary (issue 9.1): what of a stored summary is merged, how two summaries merge
 * without losing or repeating a line, and when the summarizer saw the earlier summary whole.
 */
import { describe, expect, it } from 'vitest';
import { extractedSummary } from '../../../core/compaction/extracted-summary';
import {
  carriedSummary,
  mergeSummaries,
  previousSummaryBody,
  summaryRangeOf,
} from '../../../core/compaction/summary-carry';
import { buildSummarizerInput, previousSummaryShown } from '../../../core/compaction/summary-input';
import { composeSummaryMessage, parseSummarySections } from '../../../core/compaction/summary-text';
import { estimateTokens } from '../../../core/tokens';

const sections = (facts: Record<string, string>) =>
  ['Goal', 'Decisions and findings', 'Files modified', 'Current state', 'Next steps', 'References']
    .map((name) => `## ${name}\n${facts[name] ?? '(none)'}`)
    .join('\n\n');

const stored = composeSummaryMessage({
  summaryText: sections({
    Goal: 'Build the widget.',
    'Current state': '- ERROR E4711: widget exploded\n- tests: 3 failing',
  }),
  filesModified: {
    files: [{ path: 'src/app.js', changes: ['wrote 1 line'] }],
    possiblyChangedByCommands: [],
  },
  compactedMessages: 12,
  fromSeq: 2,
  toSeq: 40,
});

describe('previousSummaryBody', () => {
  it('drops the header and the files list derived from the tool log, which the next summary writes anew', () => {
    const body = previousSummaryBody(stored);
    expect(body.startsWith('## Goal')).toBe(true);
    expect(body).toContain('ERROR E4711: widget exploded');
    expect(body).not.toContain('[goalrun] Summary of messages');
    expect(body).not.toContain('(from the tool log)');
  });

  it('reads the range a summary replaced from its header', () => {
    expect(summaryRangeOf(stored)).toEqual([2, 40]);
    expect(summaryRangeOf('## Goal\nno header')).toBeNull();
  });
});

describe('mergeSummaries', () => {
  it('keeps every line of both, section by section, without saying a line twice', () => {
    const earlier = sections({ 'Current state': '- ERROR E4711: widget exploded\n- tests: 3 failing' });
    const later = sections({ 'Current state': '- tests: 3 failing\n- ERROR E9: new failure' });
    const merged = parseSummarySections(mergeSummaries(earlier, later));
    expect(merged.sections['Current state']).toBe(
      '- ERROR E4711: widget exploded\n- tests: 3 failing\n- ERROR E9: new failure',
    );
    expect(merged.sections.Goal).toBe('(none)');
    expect(merged.missing).toEqual([]);
  });

  it('fills a section the later summary left empty from the earlier one', () => {
    const merged = parseSummarySections(
      mergeSummaries(sections({ 'Next steps': '- ship it' }), sections({ 'Next steps': '(not stated)' })),
    );
    expect(merged.sections['Next steps']).toBe('- ship it');
  });
});

describe('carriedSummary', () => {
  const earlier = previousSummaryBody(stored);
  const reply = sections({ Goal: 'Build the widget, merged.' });

  it('takes the reply as it is when the summarizer saw the earlier summary whole', () => {
    expect(carriedSummary(reply, { body: earlier, whole: true })).toBe(reply);
    expect(carriedSummary(reply, undefined)).toBe(reply);
  });

  it('carries the earlier summary verbatim when the summarizer saw only an excerpt', () => {
    const carried = carriedSummary(reply, { body: earlier, whole: false });
    expect(carried).toContain('ERROR E4711: widget exploded');
    expect(carried).toContain('Build the widget, merged.');
  });
});

describe('previousSummaryShown', () => {
  it('is whole while the earlier summary fits its share of the request, an excerpt beyond', () => {
    const summary = sections({
      'Current state': Array.from({ length: 400 }, (_, i) => `- ERROR E${i}: failure ${i}`).join('\n'),
    });
    const tokens = estimateTokens(summary);
    expect(previousSummaryShown(summary, tokens * 2).whole).toBe(true);
    const clipped = previousSummaryShown(summary, tokens);
    expect(clipped.whole).toBe(false);
    expect(estimateTokens(clipped.text)).toBeLessThan(tokens);
  });

  it('puts the earlier summary whole into the summarizer input when it fits', () => {
    const input = buildSummarizerInput({
      objective: 'build the widget',
      span: [{ role: 'user', content: [{ type: 'text', text: 'carry on' }] }],
      previousSummary: previousSummaryBody(stored),
      maxTokens: 4_000,
    });
    expect(input).toContain('# Earlier summary to merge');
    expect(input).toContain('- ERROR E4711: widget exploded\n- tests: 3 failing');
  });
});

describe('extractedSummary with an earlier summary', () => {
  it('carries every line of the earlier summary', () => {
    const text = extractedSummary({
      objective: 'build the widget',
      span: [{ role: 'user', content: [{ type: 'text', text: 'carry on' }] }],
      filesModified: { files: [], possiblyChangedByCommands: [] },
      previousSummary: previousSummaryBody(stored),
    });
    for (const line of previousSummaryBody(stored)
      .split('\n')
      .filter((l) => l.startsWith('- '))) {
      expect(text).toContain(line);
    }
    expect(parseSummarySections(text).missing).toEqual([]);
  });
});
