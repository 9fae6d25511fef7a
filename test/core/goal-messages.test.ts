import { describe, expect, it } from 'vitest';
import { undeliveredSteeringText } from '../../core/goal-messages';
import { userText, userTextOf } from '../../core/messages';

describe('messages goalrun writes', () => {
  it('tells the sender of undelivered steering why, and how to give the instruction anyway', () => {
    expect(undeliveredSteeringText('completed', 'abc-1')).toBe(
      'the goal ended (completed) before its next step; to give it this instruction: goalrun resume abc-1 --message "…"',
    );
  });

  it('reads the text of a user message, and none of any other', () => {
    expect(userTextOf(userText('[goalrun] compacted'))).toBe('[goalrun] compacted');
    expect(
      userTextOf({
        role: 'user',
        content: [
          { type: 'text', text: 'a' },
          { type: 'text', text: 'b' },
        ],
      }),
    ).toBe('ab');
    expect(userTextOf({ role: 'assistant', content: [{ type: 'text', text: 'hi' }] })).toBe('');
  });
});
