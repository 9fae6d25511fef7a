import { CHARS_PER_TOKEN } from './limits';

/** A cheap token estimate for text with no tokenizer at hand. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN);
}
