import { describe, expect, it } from 'vitest';
import { buildPrompt, MAX_CACHE_BREAKPOINTS, toFunctionTools } from '../../activities/providers/prompt';
import { parseToolCallInput, toPromptToolInput } from '../../activities/providers/tool-input';
import { cacheTtlFor, LONG_STEP_GAP_MS, placeTaskList } from '../../activities/request-layout';
import type { StoredMessage } from '../../core/messages';

describe('parseToolCallInput', () => {
  it('parses JSON and keeps malformed input as the raw string', () => {
    expect(parseToolCallInput('{"path":"a"}')).toEqual({ path: 'a' });
    expect(parseToolCallInput('{"path":')).toBe('{"path":');
    expect(parseToolCallInput('[1,2]')).toEqual([1, 2]);
  });

  it('reads empty arguments as an empty object', () => {
    expect(parseToolCallInput('')).toEqual({});
    expect(parseToolCallInput('  ')).toEqual({});
  });
});

describe('toPromptToolInput', () => {
  it('passes objects and JSON-object strings, and turns everything else into {}', () => {
    expect(toPromptToolInput({ a: 1 })).toEqual({ a: 1 });
    expect(toPromptToolInput('{"a":1}')).toEqual({ a: 1 });
    expect(toPromptToolInput('{"a":')).toEqual({});
    expect(toPromptToolInput('"just a string"')).toEqual({});
    expect(toPromptToolInput([1, 2])).toEqual({});
    expect(toPromptToolInput(null)).toEqual({});
    expect(toPromptToolInput(42)).toEqual({});
  });
});

describe('buildPrompt', () => {
  it('puts the system prompt first and copies messages part by part', () => {
    const messages: StoredMessage[] = [
      { role: 'user', content: [{ type: 'text', text: 'hello' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'calling' },
          { type: 'tool-call', toolCallId: 'c1', toolName: 'bash', input: '{"command":' },
        ],
      },
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'c1',
            toolName: 'bash',
            output: { type: 'error-text', value: 'bad' },
          },
        ],
      },
    ];
    expect(buildPrompt('be brief', messages)).toEqual([
      { role: 'system', content: 'be brief' },
      { role: 'user', content: [{ type: 'text', text: 'hello' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'calling' },
          { type: 'tool-call', toolCallId: 'c1', toolName: 'bash', input: {} },
        ],
      },
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'c1',
            toolName: 'bash',
            output: { type: 'error-text', value: 'bad' },
          },
        ],
      },
    ]);
  });

  it('drops an empty system prompt, blank text parts and messages left empty', () => {
    const messages: StoredMessage[] = [
      { role: 'user', content: [{ type: 'text', text: 'go' }] },
      { role: 'assistant', content: [{ type: 'text', text: '  ' }] },
      { role: 'user', content: [{ type: 'text', text: '' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: '' },
          { type: 'tool-call', toolCallId: 'c1', toolName: 'bash', input: { command: 'ls' } },
        ],
      },
    ];
    expect(buildPrompt('', messages)).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'go' }] },
      {
        role: 'assistant',
        content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'bash', input: { command: 'ls' } }],
      },
    ]);
  });

  it('does not pass through extra fields a stored message may carry', () => {
    const stored = {
      role: 'user',
      content: [{ type: 'text', text: 'hi', seq: 7 }],
      key: 'k',
    } as unknown as StoredMessage;
    expect(buildPrompt('', [stored])).toEqual([{ role: 'user', content: [{ type: 'text', text: 'hi' }] }]);
  });
});

describe('buildPrompt with a tail and cache hints', () => {
  const text = (value: string): StoredMessage => ({ role: 'user', content: [{ type: 'text', text: value }] });
  const call = (id: string): StoredMessage => ({
    role: 'assistant',
    content: [{ type: 'tool-call', toolCallId: id, toolName: 'bash', input: {} }],
  });
  const result = (id: string): StoredMessage => ({
    role: 'tool',
    content: [
      { type: 'tool-result', toolCallId: id, toolName: 'bash', output: { type: 'text', value: 'ok' } },
    ],
  });
  const marked = (prompt: ReturnType<typeof buildPrompt>) =>
    prompt.flatMap((message, index) => (message.providerOptions ? [index] : []));

  it('sends the tail last, after the transcript, and leaves the rest as without it', () => {
    const messages = [text('objective'), call('c1'), result('c1')];
    const without = buildPrompt('sys', messages);
    const withTail = buildPrompt('sys', messages, { tail: 'tasks: [ ] a' });
    expect(withTail.slice(0, -1)).toEqual(without);
    expect(withTail.at(-1)).toEqual({ role: 'user', content: [{ type: 'text', text: 'tasks: [ ] a' }] });
    expect(buildPrompt('sys', messages, { tail: '  ' })).toEqual(without);
  });

  it('marks the system prompt, the head, the previous request and the last message, never the tail', () => {
    // first message, summary (the head), then two steps.
    const messages = [text('first'), text('summary'), call('c1'), result('c1'), call('c2'), result('c2')];
    const prompt = buildPrompt('sys', messages, { tail: 'tasks', cache: { headCount: 2, ttl: '5m' } });
    // system 0, first 1, summary 2, c1 3, r1 4, c2 5, r2 6, tail 7.
    expect(marked(prompt)).toEqual([0, 2, 4, 6]);
    expect(prompt[6].providerOptions).toEqual({
      anthropic: { cacheControl: { type: 'ephemeral', ttl: '5m' } },
    });
    expect(prompt[7].providerOptions).toBeUndefined();
  });

  it('never places more than the limit, and skips messages dropped as empty', () => {
    const messages = [text('first'), call('c1'), result('c1'), text('   '), call('c2'), result('c2')];
    const prompt = buildPrompt('sys', messages, { cache: { headCount: 1, ttl: '1h' } });
    // system 0, first 1, c1 2, r1 3, (empty user dropped), c2 4, r2 5.
    expect(marked(prompt)).toEqual([0, 1, 3, 5]);
    expect(marked(prompt).length).toBeLessThanOrEqual(MAX_CACHE_BREAKPOINTS);
    // The first step: one message is head, previous end and last at once.
    expect(marked(buildPrompt('sys', [text('first')], { cache: { headCount: 1, ttl: '5m' } }))).toEqual([
      0, 1,
    ]);
  });
});

describe('request layout', () => {
  it('puts the task list after the transcript, or in the system prompt in the old layout', () => {
    expect(placeTaskList('stable-prefix', '[ ] a')).toEqual({
      inSystem: null,
      tail: expect.stringContaining('[ ] a'),
    });
    expect(placeTaskList('tasks-in-system', '[ ] a')).toEqual({ inSystem: '[ ] a', tail: undefined });
    expect(placeTaskList('stable-prefix', null)).toEqual({ inSystem: null, tail: undefined });
  });

  it('writes cache entries for an hour when the previous step was minutes ago', () => {
    const now = 10_000_000;
    expect(cacheTtlFor(undefined, now)).toBe('5m');
    expect(cacheTtlFor(new Date(now - 30_000), now)).toBe('5m');
    expect(cacheTtlFor(new Date(now - LONG_STEP_GAP_MS - 1), now)).toBe('1h');
  });
});

describe('toFunctionTools', () => {
  it('maps tool specs to function tools, and no tools to undefined', () => {
    const schema = { type: 'object', properties: {} };
    expect(toFunctionTools([{ name: 'bash', description: 'Runs bash.', inputSchema: schema }])).toEqual([
      { type: 'function', name: 'bash', description: 'Runs bash.', inputSchema: schema },
    ]);
    expect(toFunctionTools([])).toBeUndefined();
  });
});

describe('buildPrompt with images', () => {
  const first: StoredMessage = {
    role: 'user',
    content: [
      { type: 'text', text: 'look at this' },
      { type: 'image', imageId: 7, mediaType: 'image/png', bytes: 3, name: 'shot.png' },
    ],
  };

  it('sends an image whose bytes were read as a file part, after the text', () => {
    const data = new Uint8Array([1, 2, 3]);
    const prompt = buildPrompt('', [first], { images: new Map([[7, { mediaType: 'image/png', data }]]) });
    expect(prompt).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'look at this' },
          { type: 'file', mediaType: 'image/png', data, filename: 'shot.png' },
        ],
      },
    ]);
  });

  it('says so in text when the image is not there (the summarizer, a cleaned parent of a fork)', () => {
    const prompt = buildPrompt('', [first]);
    expect(prompt[0]).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'look at this' },
        { type: 'text', text: '[image shot.png (image/png) is no longer in the store]' },
      ],
    });
  });
});
