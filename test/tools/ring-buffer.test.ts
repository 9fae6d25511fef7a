import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ByteRing, readRingText } from '../../activities/tools/ring-buffer';

describe('ByteRing', () => {
  it('keeps everything under its capacity', () => {
    const ring = new ByteRing(10);
    ring.push(Buffer.from('abc'));
    ring.push(Buffer.from('def'));
    expect(ring.start).toBe(0);
    expect(ring.end).toBe(6);
    expect(ring.read(0, 100)).toEqual({ offset: 0, bytes: Buffer.from('abcdef'), dropped: 0 });
    expect(ring.read(2, 3).bytes.toString()).toBe('cde');
  });

  it('drops the oldest bytes and keeps absolute offsets', () => {
    const ring = new ByteRing(4);
    ring.push(Buffer.from('abcdef'));
    ring.push(Buffer.from('gh'));
    expect(ring.start).toBe(4);
    expect(ring.end).toBe(8);
    // Offset 5 is still kept: reading from it works as if nothing was dropped.
    expect(ring.read(5, 2)).toEqual({ offset: 5, bytes: Buffer.from('fg'), dropped: 0 });
    // Offset 1 was dropped: the read starts at the oldest kept byte and says how many were lost.
    expect(ring.read(1, 10)).toEqual({ offset: 4, bytes: Buffer.from('efgh'), dropped: 3 });
  });

  it('returns nothing past the end', () => {
    const ring = new ByteRing(4);
    ring.push(Buffer.from('ab'));
    expect(ring.read(9, 4)).toEqual({ offset: 2, bytes: Buffer.alloc(0), dropped: 0 });
  });

  it('agrees with the tail of everything written, for any chunks and capacity', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 64 }),
        fc.array(fc.uint8Array({ maxLength: 100 }), { maxLength: 20 }),
        fc.nat({ max: 1_000 }),
        fc.integer({ min: 1, max: 200 }),
        (capacity, chunks, offset, limit) => {
          const ring = new ByteRing(capacity);
          for (const chunk of chunks) ring.push(chunk);
          const all = Buffer.concat(chunks);
          const slice = ring.read(offset, limit);
          const from = Math.min(Math.max(offset, all.length - capacity, 0), all.length);
          expect(slice.offset).toBe(from);
          expect(slice.bytes).toEqual(all.subarray(from, Math.min(all.length, from + limit)));
          expect(slice.dropped).toBe(Math.max(0, from - offset));
        },
      ),
    );
  });
});

describe('readRingText', () => {
  it('never splits a character: pages concatenate to the text', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme', maxLength: 60 }),
        fc.integer({ min: 4, max: 16 }),
        (text, limit) => {
          const ring = new ByteRing(1_024);
          ring.push(Buffer.from(text));
          let offset = 0;
          let joined = '';
          for (let pages = 0; offset < ring.end && pages < 1_000; pages++) {
            const page = readRingText(ring, offset, limit);
            expect(page.offset).toBe(offset);
            joined += page.text;
            offset = page.next;
          }
          expect(joined).toBe(text);
        },
      ),
    );
  });

  it('holds back a character whose bytes are not all written yet', () => {
    const ring = new ByteRing(64);
    const euro = Buffer.from('€');
    ring.push(Buffer.concat([Buffer.from('a'), euro.subarray(0, 2)]));
    const first = readRingText(ring, 0, 64);
    expect(first).toMatchObject({ text: 'a', next: 1 });
    ring.push(euro.subarray(2));
    expect(readRingText(ring, first.next, 64)).toMatchObject({ text: '€', next: 4 });
  });

  it('starts after a character whose first bytes were dropped', () => {
    const ring = new ByteRing(3);
    ring.push(Buffer.from('a€'));
    // Kept: the last three bytes, which are exactly '€'; '€' minus its lead byte would be garbage.
    expect(readRingText(ring, 0, 10)).toMatchObject({ offset: 1, text: '€', dropped: 1 });
    const ring2 = new ByteRing(2);
    ring2.push(Buffer.from('a€'));
    expect(readRingText(ring2, 0, 10)).toMatchObject({ text: '', dropped: 4 });
  });
});
