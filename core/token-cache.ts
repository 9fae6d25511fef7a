/**
 * Token estimates of texts that come back unchanged, step after step: a goal's system prompt and the
 * JSON of its tools are the same for most of its steps, and estimating them char by char on every
 * model step was about 1.5 % of the worker's main thread at 100 concurrent goals.
 */
import { estimateTokens } from './tokens';

/** How many texts a cache keeps by default: a few per live goal shape, not per goal. */
export const TOKEN_CACHE_DEFAULT_SIZE = 64;

/** estimateTokens with the most recently used texts remembered; the oldest goes when it is full. */
export class TokenCountCache {
  private readonly counts = new Map<string, number>();

  constructor(
    private readonly maxTexts = TOKEN_CACHE_DEFAULT_SIZE,
    private readonly estimate: (text: string) => number = estimateTokens,
  ) {
    if (!Number.isInteger(maxTexts) || maxTexts < 1)
      throw new RangeError('maxTexts must be a positive integer');
  }

  /** The estimate of `text`, the same as estimateTokens(text). */
  count(text: string): number {
    const known = this.counts.get(text);
    if (known !== undefined) {
      // Moved to the end: the Map's order is the eviction order.
      this.counts.delete(text);
      this.counts.set(text, known);
      return known;
    }
    const tokens = this.estimate(text);
    if (this.counts.size >= this.maxTexts) {
      const oldest = this.counts.keys().next().value as string;
      this.counts.delete(oldest);
    }
    this.counts.set(text, tokens);
    return tokens;
  }

  /** The estimates of `texts` added up. */
  sum(...texts: string[]): number {
    let tokens = 0;
    for (const text of texts) tokens += this.count(text);
    return tokens;
  }

  /** How many texts it holds now. */
  get size(): number {
    return this.counts.size;
  }
}
