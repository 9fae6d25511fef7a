import { describe, expect, it } from 'vitest';
import { escapeUiMarkdown } from '../../core/ui-markdown';

describe('escapeUiMarkdown (the Web UI reads $…$ as math)', () => {
  it('escapes every dollar of the budget line', () => {
    expect(escapeUiMarkdown('Budget: $0.5005 spent, $0.0000 reserved')).toBe(
      'Budget: \\$0.5005 spent, \\$0.0000 reserved',
    );
  });

  it('leaves dollars inside code spans alone, a backslash there would be shown', () => {
    expect(escapeUiMarkdown('ran `echo $HOME` for $1')).toBe('ran `echo $HOME` for \\$1');
    expect(escapeUiMarkdown('``a ` $x`` and $y')).toBe('``a ` $x`` and \\$y');
  });

  it('treats an unmatched backtick as text', () => {
    expect(escapeUiMarkdown('a ` b $1')).toBe('a ` b \\$1');
  });

  it('keeps a backslash that stood before a dollar visible', () => {
    // `\$` in the text: without its own escape, the backslash would escape the dollar and vanish.
    expect(escapeUiMarkdown('echo \\$PATH')).toBe('echo \\\\\\$PATH');
    expect(escapeUiMarkdown('$$')).toBe('\\$\\$');
  });

  it('changes nothing in text without dollars', () => {
    const text = '- **Status:** running — `goalrun unpause x`\n\n**Recent:**';
    expect(escapeUiMarkdown(text)).toBe(text);
  });
});
