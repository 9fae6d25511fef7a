/**
 * One model card file (spec F-CARDS): `models/cards/<provider>/<model>.json`, validated with zod so a
 * typo fails loudly, naming the file and the field, instead of silently falling back to defaults.
 */
import { z } from 'zod';
import { ConfigError } from '../../core/errors';
import { CARD_INPUTS, type ModelCard, withCachePriceDefaults } from '../../core/model-card';

/** How many schema problems one error message lists before it says "and N more". */
const MAX_LISTED_ISSUES = 3;

const tokenCount = z.int().positive();
const pricePerMTok = z.number().nonnegative();

/** Cache prices are optional: each defaults to the input price (core/model-card.ts). */
const pricesSchema = z
  .strictObject({
    inputPerMTok: pricePerMTok,
    outputPerMTok: pricePerMTok,
    cacheReadPerMTok: pricePerMTok.optional(),
    cacheWritePerMTok: pricePerMTok.optional(),
    cacheWrite1hPerMTok: pricePerMTok.optional(),
  })
  .transform(withCachePriceDefaults);

/** The JSON shape of a card file; strict, so a misspelt key is an error rather than an ignored default. */
export const modelCardSchema = z
  .strictObject({
    provider: z.string().min(1),
    model: z.string().min(1),
    advertisedContextTokens: tokenCount,
    guaranteedContextTokens: tokenCount.optional(),
    maxOutputTokens: tokenCount,
    prices: pricesSchema,
    minCacheTokens: tokenCount.optional(),
    input: z.array(z.enum(CARD_INPUTS)).min(1).optional(),
    source: z.string().min(1).optional(),
    /** The day the prices were last compared with the provider's published prices (YYYY-MM-DD). */
    pricesChecked: z.iso.date().optional(),
    notes: z.string().optional(),
  })
  .refine(
    (card) =>
      card.guaranteedContextTokens === undefined ||
      card.guaranteedContextTokens <= card.advertisedContextTokens,
    { path: ['guaranteedContextTokens'], message: 'must not exceed advertisedContextTokens' },
  )
  .refine((card) => card.maxOutputTokens <= card.advertisedContextTokens, {
    path: ['maxOutputTokens'],
    message: 'must not exceed advertisedContextTokens',
  });

/** Where a card file sits, which its `provider` and `model` fields must agree with. */
export interface CardLocation {
  provider: string;
  model: string;
}

/**
 * Validates the text of a card file. With `location`, the card's provider and model must match its
 * folder and file name, so that the catalog never serves a card under another model's name.
 * Throws ConfigError naming the file and the field.
 */
export function parseCardFile(file: string, text: string, location?: CardLocation): ModelCard {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(`model card ${file} is not valid JSON: ${(err as Error).message}`);
  }
  const result = modelCardSchema.safeParse(json);
  if (!result.success) {
    const issues = result.error.issues.flatMap(describeIssue);
    const listed = issues.slice(0, MAX_LISTED_ISSUES).join('; ');
    const more = issues.length > MAX_LISTED_ISSUES ? ` (and ${issues.length - MAX_LISTED_ISSUES} more)` : '';
    throw new ConfigError(`model card ${file} is invalid: ${listed}${more}`);
  }
  const card = result.data;
  if (location !== undefined) {
    if (card.provider !== location.provider) {
      throw new ConfigError(
        `model card ${file} is invalid: field "provider" is "${card.provider}" but the card is in the "${location.provider}" folder`,
      );
    }
    if (card.model !== location.model) {
      throw new ConfigError(
        `model card ${file} is invalid: field "model" is "${card.model}" but the file is named for "${location.model}"`,
      );
    }
  }
  return card;
}

/** One line per problem, each naming its field; an unknown key names the key itself. */
function describeIssue(issue: z.core.$ZodIssue): string[] {
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((key) => `field "${formatPath([...issue.path, key])}": unknown field`);
  }
  return [`field "${formatPath(issue.path)}": ${issue.message}`];
}

/** Renders a zod issue path the way a reader would write it: `prices.inputPerMTok`. */
function formatPath(issuePath: ReadonlyArray<PropertyKey>): string {
  if (issuePath.length === 0) return '(top level)';
  return issuePath
    .map((key, i) => (typeof key === 'number' ? `[${key}]` : `${i === 0 ? '' : '.'}${String(key)}`))
    .join('');
}
