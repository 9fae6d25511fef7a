import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { clipChars, edgeLines, truncateForModel, truncationFooter, utf8Length } from '../../core/truncate';

const FOOTER =
  /\n\[truncated: (\d+) of (\d+) lines omitted; use tool-output \{"id":"spool:(\d+)","offset":(\d+)\} to read more\]$/;

/** Splits a truncated result into the head the model sees and the footer's numbers. */
function parse(result: string): {
  head: string;
  omitted: number;
  total: number;
  spoolId: number;
  offset: number;
} {
  const match = FOOTER.exec(result);
  if (!match) throw new Error(`no truncation footer in ${JSON.stringify(result.slice(-200))}`);
  return {
    head: result.slice(0, match.index),
    omitted: Number(match[1]),
    total: Number(match[2]),
    spoolId: Number(match[3]),
    offset: Number(match[4]),
  };
}

/** Whether a string holds a surrogate half without its partner (unstorable in jsonb). */
function hasLoneSurrogate(text: string): boolean {
  return /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text);
}

function numberedLines(count: number, width = 9): string {
  return Array.from({ length: count }, (_, i) => `line ${String(i + 1).padStart(width - 5, '0')}`).join('\n');
}

describe('utf8Length', () => {
  it('counts UTF-8 bytes, not UTF-16 units', () => {
    expect(utf8Length('')).toBe(0);
    expect(utf8Length('abc')).toBe(3);
    expect(utf8Length('é')).toBe(2);
    expect(utf8Length('€')).toBe(3);
    expect(utf8Length('😀')).toBe(4);
    expect(utf8Length('a\né€😀')).toBe(Buffer.byteLength('a\né€😀'));
  });
});

describe('truncationFooter', () => {
  it('has the exact documented format', () => {
    expect(truncationFooter(90, 100, 7, 1234)).toBe(
      '[truncated: 90 of 100 lines omitted; use tool-output {"id":"spool:7","offset":1234} to read more]',
    );
  });
});

describe('truncateForModel', () => {
  it('returns output that fits unchanged, including exactly at the limit', () => {
    expect(truncateForModel('', 1, 10)).toBe('');
    expect(truncateForModel('short', 1, 10)).toBe('short');
    expect(truncateForModel('0123456789', 1, 10)).toBe('0123456789');
    const lines = numberedLines(5);
    expect(truncateForModel(lines, 1, lines.length)).toBe(lines);
  });

  it('keeps whole lines within the budget and appends the exact footer', () => {
    // 100 lines of 9 chars: 10 lines plus 9 newlines take 99 chars, the 11th line would need 109.
    const output = numberedLines(100);
    const result = truncateForModel(output, 42, 100);
    const head = output.split('\n').slice(0, 10).join('\n');
    expect(result).toBe(
      `${head}\n[truncated: 90 of 100 lines omitted; use tool-output {"id":"spool:42","offset":${head.length + 1}} to read more]`,
    );
    expect(parse(result).offset).toBe(100);
  });

  it('keeps the head to at most maxChars characters', () => {
    const output = numberedLines(100);
    for (const max of [9, 10, 18, 19, 20, 99, 100, 101, 500]) {
      const { head } = parse(truncateForModel(output, 1, max));
      expect(head.length).toBeLessThanOrEqual(max);
      expect(output.startsWith(head)).toBe(true);
    }
  });

  it('a line that exactly fills the budget is kept', () => {
    const output = `${'a'.repeat(10)}\n${'b'.repeat(10)}`;
    const parsed = parse(truncateForModel(output, 3, 10));
    expect(parsed.head).toBe('a'.repeat(10));
    expect(parsed).toMatchObject({ omitted: 1, total: 2, offset: 11 });
  });

  it('offset is the UTF-8 byte length of the kept head including its newline, on multi-byte text', () => {
    const lines = Array.from({ length: 50 }, (_, i) => `${i} héllo wörld € 😀 日本語`);
    const output = lines.join('\n');
    const result = truncateForModel(output, 5, 200);
    const { head, offset, omitted, total } = parse(result);
    expect(head.length).toBeLessThanOrEqual(200);
    const keptCount = head.split('\n').length;
    expect(head).toBe(lines.slice(0, keptCount).join('\n'));
    expect(offset).toBe(Buffer.byteLength(`${head}\n`, 'utf8'));
    // Multi-byte text: bytes and characters differ, so a char count would be wrong.
    expect(offset).toBeGreaterThan(head.length + 1);
    expect(omitted).toBe(50 - keptCount);
    expect(total).toBe(50);
    // Reading the spool (the full output) from the offset continues with the first omitted line.
    const rest = Buffer.from(output, 'utf8').subarray(offset).toString('utf8');
    expect(rest).toBe(lines.slice(keptCount).join('\n'));
  });

  it('cuts a single over-long line at maxChars with the offset at the cut', () => {
    const output = 'x'.repeat(50);
    const result = truncateForModel(output, 9, 20);
    expect(result).toBe(
      `${'x'.repeat(20)}\n[truncated: 1 of 1 lines omitted; use tool-output {"id":"spool:9","offset":20} to read more]`,
    );
  });

  it('cuts an over-long first line of several and counts every line as omitted', () => {
    const output = `${'é'.repeat(30)}\nsecond\nthird`;
    const { head, omitted, total, offset } = parse(truncateForModel(output, 2, 10));
    expect(head).toBe('é'.repeat(10));
    expect(omitted).toBe(3);
    expect(total).toBe(3);
    // No newline was kept, so the offset is just the head's bytes: 10 × 2.
    expect(offset).toBe(20);
    expect(offset).toBe(Buffer.byteLength(head));
  });

  it('never cuts an over-long line inside a surrogate pair (bug fixed: lone surrogates break jsonb)', () => {
    const output = '😀'.repeat(20);
    for (const max of [1, 2, 3, 4, 5, 11]) {
      const { head, offset } = parse(truncateForModel(output, 1, max));
      expect(hasLoneSurrogate(head)).toBe(false);
      expect(head).toBe('😀'.repeat(Math.floor(max / 2)));
      expect(offset).toBe(Buffer.byteLength(head));
      // The offset lands on a character boundary of the spooled bytes.
      expect(Buffer.from(output).subarray(offset).toString('utf8')).toBe(output.slice(head.length));
    }
  });

  it('keeps an empty first line when that is all that fits', () => {
    const output = `\n${'y'.repeat(40)}`;
    const { head, omitted, total, offset } = parse(truncateForModel(output, 1, 10));
    expect(head).toBe('');
    expect({ omitted, total, offset }).toEqual({ omitted: 1, total: 2, offset: 1 });
  });

  it('counts a trailing newline as one more (empty) line', () => {
    // Current behaviour: "a\nb\n…\n" splits into N+1 entries, so the footer's total is one higher than
    // the number of text lines (reported as a nit, not changed).
    const output = `${numberedLines(20)}\n`;
    const { total } = parse(truncateForModel(output, 1, 50));
    expect(total).toBe(21);
  });

  it('property: head + rest read from the offset is the whole output', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ unit: 'binary', maxLength: 40 }), { minLength: 1, maxLength: 30 }),
        fc.integer({ min: 1, max: 200 }),
        fc.integer({ min: 1, max: 1_000_000 }),
        (lines, maxChars, spoolId) => {
          const output = lines.join('\n');
          const result = truncateForModel(output, spoolId, maxChars);
          if (output.length <= maxChars) {
            expect(result).toBe(output);
            return;
          }
          const parsed = parse(result);
          expect(parsed.spoolId).toBe(spoolId);
          // Generated lines may hold newlines of their own, so count the output's lines.
          expect(parsed.total).toBe(output.split('\n').length);
          expect(parsed.head.length).toBeLessThanOrEqual(maxChars);
          expect(hasLoneSurrogate(parsed.head)).toBe(false);
          const bytes = Buffer.from(output, 'utf8');
          const headBytes = bytes.subarray(0, parsed.offset).toString('utf8');
          // The bytes before the offset are the head (plus its newline when whole lines were kept).
          expect([parsed.head, `${parsed.head}\n`]).toContain(headBytes);
          expect(headBytes + bytes.subarray(parsed.offset).toString('utf8')).toBe(output);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('clipChars', () => {
  it('cuts to maxChars and leaves shorter text alone', () => {
    expect(clipChars('abcdef', 3)).toBe('abc');
    expect(clipChars('abc', 3)).toBe('abc');
    expect(clipChars('ab', 3)).toBe('ab');
    expect(clipChars('abc', 0)).toBe('');
  });

  it('drops a high surrogate rather than leave it alone at the end', () => {
    expect(clipChars('a😀b', 2)).toBe('a');
    expect(clipChars('a😀b', 3)).toBe('a😀');
    expect(clipChars('a😀', 3)).toBe('a😀');
  });
});

describe('edgeLines', () => {
  it('returns the first and last non-empty lines', () => {
    expect(edgeLines('\n  \nfirst\nmiddle\nlast\n\n')).toEqual({ first: 'first', last: 'last' });
  });

  it('returns the same line twice when there is only one', () => {
    expect(edgeLines('only')).toEqual({ first: 'only', last: 'only' });
  });

  it('returns empty strings for empty or whitespace-only output', () => {
    expect(edgeLines('')).toEqual({ first: '', last: '' });
    expect(edgeLines('\n \n\t\n')).toEqual({ first: '', last: '' });
  });

  it('keeps the line as it is (no trimming), only clipped', () => {
    expect(edgeLines('  indented  \nx')).toEqual({ first: '  indented  ', last: 'x' });
  });

  it('clips to 120 characters by default and to maxChars when given', () => {
    const long = 'z'.repeat(300);
    expect(edgeLines(`${long}\nshort`).first).toHaveLength(120);
    expect(edgeLines(`short\n${long}`, 10)).toEqual({ first: 'short', last: 'z'.repeat(10) });
  });

  it('does not clip inside a surrogate pair (bug fixed: the tool event is stored as jsonb)', () => {
    const line = `${'a'.repeat(119)}😀 and more`;
    const { first, last } = edgeLines(line);
    expect(first).toBe('a'.repeat(119));
    expect(last).toBe(first);
    expect(hasLoneSurrogate(first)).toBe(false);
  });
});
