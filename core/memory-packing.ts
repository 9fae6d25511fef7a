/**
 * Packing memory-search results into what is left of the context (issue 17, F-MEMORY; the rule of
 * 003): highest rank first, each result taken whole if it still fits, never past the budget. A
 * result too big for what is left is skipped, and smaller, lower-ranked ones may still fill the space.
 */

/** The memory tool's answer is capped here even when the context has far more room. */
export const MEMORY_RESULT_MAX_TOKENS = 4_000;
/** Results the memory tool asks the store for when the model names no limit. */
export const MEMORY_DEFAULT_LIMIT = 8;
/** The most results the model may ask for. */
export const MEMORY_MAX_LIMIT = 50;

/** Something ranked with a size. */
export interface Packable {
  rank: number;
  tokens: number;
}

/**
 * The items to show, highest rank first (ties keep the given order), whose tokens sum to at most
 * `budgetTokens`: each is taken if it fits in what is left when its turn comes.
 */
export function packByRank<T extends Packable>(items: readonly T[], budgetTokens: number): T[] {
  const order = items.map((item, index) => ({ item, index }));
  order.sort((a, b) => b.item.rank - a.item.rank || a.index - b.index);
  const packed: T[] = [];
  let left = Math.max(0, Math.floor(budgetTokens));
  for (const { item } of order) {
    if (item.tokens > left) continue;
    packed.push(item);
    left -= item.tokens;
  }
  return packed;
}

/**
 * Tokens the memory tool may return: what the usable input leaves after the newest request (and
 * the tool's own reserve), capped at MEMORY_RESULT_MAX_TOKENS; the cap alone when either is unknown.
 */
export function memoryBudgetTokens(usableInputTokens: number | null, usedTokens: number | null): number {
  if (usableInputTokens === null || usedTokens === null) return MEMORY_RESULT_MAX_TOKENS;
  return Math.max(0, Math.min(MEMORY_RESULT_MAX_TOKENS, usableInputTokens - usedTokens));
}
