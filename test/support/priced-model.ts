/** A model with a price the money tests can count on, given to goalrun as a user's model card. */
import fs from 'node:fs';
import path from 'node:path';

/** The model the money tests name; the OpenAI test server answers for it like any other. */
export const PRICED_MODEL = 'openai-compatible:priced-model';

/** Output at $10 per million and a 1,000-token ceiling: every call reserves exactly $0.01. */
const PRICED_CARD = {
  provider: 'openai-compatible',
  model: 'priced-model',
  advertisedContextTokens: 128_000,
  maxOutputTokens: 1_000,
  prices: { inputPerMTok: 0, outputPerMTok: 10, cacheReadPerMTok: 0, cacheWritePerMTok: 0 },
  source: 'test',
};

/** Writes the priced model's card where goalrun reads a user's cards: GOALRUN_HOME/cards. */
export function writePricedModelCard(home: string): void {
  const dir = path.join(home, 'cards', 'openai-compatible');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'priced-model.json'), JSON.stringify(PRICED_CARD));
}
