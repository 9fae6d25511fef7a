import { describe, expect, it } from 'vitest';
import { buildPrompt, toFunctionTools } from '../../activities/providers/prompt';
import { parseToolCallInput, toPromptToolInput } from '../../activities/providers/tool-input';
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

describe('toFunctionTools', () => {
  it('maps tool specs to function tools, and no tools to undefined', () => {
    const schema = { type: 'object', properties: {} };
    expect(toFunctionTools([{ name: 'bash', description: 'Runs bash.', inputSchema: schema }])).toEqual([
      { type: 'function', name: 'bash', description: 'Runs bash.', inputSchema: schema },
    ]);
    expect(toFunctionTools([])).toBeUndefined();
  });
});
