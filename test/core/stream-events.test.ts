import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { streamEventsOf } from '../../core/event-log';
import { clipBytes, STREAM_EVENT_TYPES, streamEventSchema } from '../../core/stream-events';
import { renderEventsDoc } from '../../core/stream-events-doc';

describe('docs/events.md', () => {
  it('is what the schemas generate (run: npm run build && node scripts/generate-events-doc.js)', () => {
    const file = fs.readFileSync(path.resolve(__dirname, '../../docs/events.md'), 'utf8');
    expect(file).toBe(renderEventsDoc());
    for (const type of STREAM_EVENT_TYPES) expect(file).toContain(`## \`${type}\``);
  });
});

describe('streamEventsOf', () => {
  it('turns a model step into text, calls and usage, every one valid', () => {
    const events = streamEventsOf('s', {
      id: 7,
      kind: 'model-usage',
      data: {
        step: 3,
        model: 'openai:gpt-4o',
        text: 'Running the tests.',
        toolCalls: [
          { id: 'c1', name: 'bash', summary: 'bash: npm test', arguments: '{"command":"npm test"}' },
        ],
        usage: { inputTokens: 100, outputTokens: 20, cacheReadTokens: 0, cacheWriteTokens: 0 },
      },
    });
    expect(events.map((event) => event.type)).toEqual(['assistant_text', 'tool_call', 'usage']);
    for (const event of events) expect(streamEventSchema.parse(event)).toEqual(event);
    expect(events[1]).toMatchObject({ cursor: 7, arguments_truncated: false, summary: 'bash: npm test' });
  });

  it('ignores bookkeeping rows and maps status rows to notices', () => {
    expect(streamEventsOf('s', { id: 1, kind: 'progress', data: { step: 1 } })).toEqual([]);
    expect(streamEventsOf('s', { id: 2, kind: 'paused', data: {} })).toEqual([
      { session_id: 's', cursor: 2, type: 'notice', text: 'paused until goalrun unpause s' },
    ]);
  });
});

describe('clipBytes', () => {
  it('cuts at a character boundary, never inside a multi-byte character', () => {
    expect(clipBytes('abc', 3)).toEqual({ text: 'abc', truncated: false });
    expect(clipBytes('aé€😀', 6)).toEqual({ text: 'aé€', truncated: true });
    expect(clipBytes('aé€😀', 5)).toEqual({ text: 'aé', truncated: true });
    expect(clipBytes('😀😀', 5)).toEqual({ text: '😀', truncated: true });
  });
});
