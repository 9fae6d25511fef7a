/** Terminal text (issue 31): control characters shown visibly, widths in display columns. */
import { describe, expect, it } from 'vitest';
import { LiveLine } from '../../cli/live-line';
import { clipToWidth, displayWidth, terminalTable } from '../../cli/terminal-text';
import { terminalSafe } from '../../core/text';

describe('terminalSafe', () => {
  it('shows escape sequences, C1 controls, bidi overrides and lone carriage returns visibly', () => {
    expect(terminalSafe('\x1b]0;pwned\x07\x1b[2J')).toBe('\\x1b]0;pwned\\x07\\x1b[2J');
    expect(terminalSafe('a\rb')).toBe('a\\rb');
    expect(terminalSafe('\x9b31m\x7f\u202eevil')).toBe('\\x9b31m\\x7f\\u202eevil');
    expect(terminalSafe('\0\b')).toBe('\\x00\\x08');
  });

  it('keeps newlines, tabs, CJK and emoji, and turns CRLF into LF', () => {
    expect(terminalSafe('line 1\r\nline 2\tcol\n中文 😀')).toBe('line 1\nline 2\tcol\n中文 😀');
  });
});

describe('display widths', () => {
  it('counts CJK and emoji as two columns, combining marks as none', () => {
    expect(displayWidth('abc')).toBe(3);
    expect(displayWidth('中文')).toBe(4);
    expect(displayWidth('😀')).toBe(2);
    expect(displayWidth('e\u0301')).toBe(1);
  });

  it('clips to columns without splitting a grapheme', () => {
    expect(clipToWidth('中文字符串', 6)).toBe('中文…');
    expect(displayWidth(clipToWidth('中文字符串', 6))).toBeLessThanOrEqual(6);
    expect(clipToWidth('ab😀cd', 3)).toBe('ab…');
    expect(clipToWidth('short', 10)).toBe('short');
  });

  it('aligns table columns by display width', () => {
    const lines = terminalTable([
      ['NAME', 'N'],
      ['中文', '1'],
      ['ab', '22'],
    ]);
    expect(lines).toEqual(['NAME  N', '中文  1', 'ab    22']);
  });
});

/** A terminal of `columns` columns that records what is written to it. */
function fakeTerminal(columns: number) {
  const written: string[] = [];
  const out = {
    isTTY: true,
    columns,
    write: (text: string) => {
      written.push(text);
      return true;
    },
  } as unknown as NodeJS.WriteStream;
  return { out, written };
}

describe('the live line', () => {
  it('never writes more columns than the terminal has, whatever the label (CJK, emoji, escapes)', () => {
    const { out, written } = fakeTerminal(40);
    const line = new LiveLine(out);
    for (const label of [
      'bash: 构建所有模块并运行完整的测试套件以确认一切正常',
      'bash: 😀'.repeat(10),
      'x\x1b[2J'.repeat(20),
    ]) {
      line.update({ step: 3, label, since: null, attempt: 1, lastFailure: null }, label);
      const shown = written.at(-1)?.replace('\r\x1b[2K', '') ?? '';
      expect(displayWidth(shown)).toBeLessThanOrEqual(39);
      expect(shown).not.toContain('\x1b');
    }
  });
});
