/**
 * Model cards (spec F-CARDS): what goalrun knows about a model's context window, output ceiling and
 * prices. Pure types and defaults; the catalog in activities/models/catalog.ts reads the card files.
 */

/** USD per million tokens, by kind of token. */
export interface ModelPrices {
  inputPerMTok: number;
  outputPerMTok: number;
  /** Input tokens served from the provider's prompt cache. */
  cacheReadPerMTok: number;
  /** Input tokens written to the prompt cache (providers without a write surcharge: the input price). */
  cacheWritePerMTok: number;
  /** Input tokens written to the prompt cache for an hour (Anthropic's 1-hour TTL); absent: the write price. */
  cacheWrite1hPerMTok?: number;
}

/** A card file's prices: the cache prices may be left out (an endpoint without a prompt cache). */
export type CardFilePrices = Omit<ModelPrices, 'cacheReadPerMTok' | 'cacheWritePerMTok'> &
  Partial<Pick<ModelPrices, 'cacheReadPerMTok' | 'cacheWritePerMTok'>>;

/**
 * A card's prices with the cache prices it left out: a cache read and a cache write each cost the
 * input price, what an endpoint without a cache (or without a cache discount) bills for them.
 */
export function withCachePriceDefaults(prices: CardFilePrices): ModelPrices {
  return {
    ...prices,
    cacheReadPerMTok: prices.cacheReadPerMTok ?? prices.inputPerMTok,
    cacheWritePerMTok: prices.cacheWritePerMTok ?? prices.inputPerMTok,
  };
}

/** One model's limits and prices. */
export interface ModelCard {
  /** Provider name, the part of a model specifier before the first colon (e.g. `openai`). */
  provider: string;
  /** Model name as the card file names it; specifiers extending it (dated snapshots, tags) share the card. */
  model: string;
  /** The context window (input plus output) the model is advertised with. */
  advertisedContextTokens: number;
  /** A smaller window the serving stack guarantees (e.g. Ollama's default num_ctx), when there is one. */
  guaranteedContextTokens?: number;
  /** The most output tokens one request may produce. */
  maxOutputTokens: number;
  prices: ModelPrices;
  /**
   * The shortest prompt prefix the provider caches (512 to 4,096 tokens, per model): a shorter one is
   * silently not cached. Absent: the provider does not say, or does not cache.
   */
  minCacheTokens?: number;
  /** What the model takes as input; absent means text only. `--image` needs `image` here. */
  input?: CardInput[];
  /** Where the figures come from, so a reader knows how far to trust them. */
  source?: string;
  /** The day the prices were last compared with the provider's published prices (YYYY-MM-DD). */
  pricesChecked?: string;
  /** Anything else a reader of the card should know. */
  notes?: string;
}

/** The kinds of input a card may say its model takes. */
export const CARD_INPUTS = ['text', 'image'] as const;

/** One of CARD_INPUTS. */
export type CardInput = (typeof CARD_INPUTS)[number];

/** Whether a card says its model takes images (`"input": ["text", "image"]`). */
export function takesImages(card: Pick<ModelCard, 'input'>): boolean {
  return card.input?.includes('image') === true;
}

/** Window of the generic card: small enough that no current chat model rejects a request that fits it. */
export const GENERIC_CONTEXT_TOKENS = 32_000;
/** Output ceiling of the generic card. */
export const GENERIC_MAX_OUTPUT_TOKENS = 4_000;

/**
 * The card for a model with no card file: a conservative window and no prices (its cost shows as
 * unpriced, never as a guess).
 */
export const GENERIC_CARD: Readonly<ModelCard> = Object.freeze({
  provider: 'generic',
  model: 'generic',
  advertisedContextTokens: GENERIC_CONTEXT_TOKENS,
  maxOutputTokens: GENERIC_MAX_OUTPUT_TOKENS,
  prices: Object.freeze({ inputPerMTok: 0, outputPerMTok: 0, cacheReadPerMTok: 0, cacheWritePerMTok: 0 }),
  source: 'goalrun default for models without a card',
});

/** Whether a card is the generic one (compared by name, so it also holds for a card that went through JSON). */
export function isGenericCard(card: ModelCard): boolean {
  return card.provider === GENERIC_CARD.provider && card.model === GENERIC_CARD.model;
}
