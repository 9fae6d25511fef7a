/**
 * The model catalog (spec F-CARDS): resolves a `provider:model` specifier to its card from the
 * provider-owned folders under `models/cards/`, falling back to the conservative generic card (with a
 * warning) for a model nobody wrote a card for. Also resolves the deployment's primary and backup cards.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { ConfigError } from '../../core/errors';
import { GENERIC_CARD, GENERIC_CONTEXT_TOKENS, type ModelCard } from '../../core/model-card';
import { formatModelSpec, type ModelSpec, PROVIDER_NAMES, parseModelSpec } from '../providers/spec';
import { parseCardFile } from './card-file';

/** Card files live in `<package root>/models/cards/<provider>/<model>.json`. */
const CARDS_SUBDIR = ['models', 'cards'];
const CARD_EXTENSION = '.json';
/**
 * What may follow a card's model name in a specifier that still is that model: a dated snapshot
 * (`-2024-08-06`, `-20250929`, `@20250929`), `-latest`, or an Ollama tag (`:8b`). Any other remainder
 * (`gpt-4.1-nano` after `gpt-4.1`) is a different model that merely shares the prefix: its card is used,
 * with a warning, because its window is usually the family's while its prices may not be.
 */
const SNAPSHOT_SUFFIX = /^(?:[-@](?:\d{4}-?\d{2}-?\d{2}|latest)|:.*)$/;

/**
 * A card file of this name covers every model of its provider that has no card of its own: for
 * providers whose "model" is not a model name (`scripted:<file>` names a file of turns).
 */
export const ANY_MODEL_CARD = 'any';

/** How a specifier found its card: its own, a family's, its provider's `any` card, or none. */
export type CardMatch = 'exact' | 'prefix' | 'provider' | 'generic';

/** A specifier's card, and what the caller should tell the user about it. */
export interface ResolvedCard {
  /** The specifier as `provider:model`. */
  spec: string;
  card: ModelCard;
  match: CardMatch;
  /** The window the provider reported for this model, when it did; the budget enforces it first. */
  providerReportedContextTokens?: number;
  /** Set when the card is a fallback (generic or another model's), to be shown once to the user. */
  warning?: string;
}

/** Where to look and what the provider said about the window. */
export interface ResolveCardOptions {
  /** Folder of the provider folders; the package's `models/cards` by default. */
  cardsDir?: string;
  /** A window the provider reported (e.g. a server's configured context length); ignored unless a positive integer. */
  providerReportedContextTokens?: number;
}

/** The deployment's cards: the primary model's and, when configured, the backup's. */
export interface ResolvedCards {
  primary: ResolvedCard;
  backup?: ResolvedCard;
  /** The warnings of both, in that order. */
  warnings: string[];
}

/** Cards by provider name. */
export type ModelCatalog = ReadonlyMap<string, readonly ModelCard[]>;

/**
 * The default card folder: `models/cards` under the package root, found by walking up to the nearest
 * package.json, so it is the same folder from the TypeScript sources and from the compiled `dist/`.
 */
export function cardsDir(): string {
  let dir = __dirname;
  for (;;) {
    if (existsSync(path.join(dir, 'package.json'))) return path.join(dir, ...CARDS_SUBDIR);
    const parent = path.dirname(dir);
    if (parent === dir) {
      throw new ConfigError(`cannot find the goalrun package root (no package.json above ${__dirname})`);
    }
    dir = parent;
  }
}

/**
 * Reads and validates every card under `dir`. Throws ConfigError naming the file and field of the first
 * invalid card, or a folder that names no provider: a broken card must not silently mean "no card".
 */
export function loadCatalog(dir: string = cardsDir()): ModelCatalog {
  if (!isDirectory(dir)) throw new ConfigError(`model card folder ${dir} does not exist`);
  const catalog = new Map<string, ModelCard[]>();
  for (const provider of readdirSync(dir).sort()) {
    const providerDir = path.join(dir, provider);
    // Loose files beside the provider folders (a README) are not cards.
    if (!isDirectory(providerDir)) continue;
    if (!(PROVIDER_NAMES as readonly string[]).includes(provider)) {
      throw new ConfigError(
        `model card folder ${providerDir} names no provider; expected one of ${PROVIDER_NAMES.join(', ')}`,
      );
    }
    const cards: ModelCard[] = [];
    for (const name of readdirSync(providerDir).sort()) {
      if (!name.endsWith(CARD_EXTENSION)) continue;
      const file = path.join(providerDir, name);
      const model = name.slice(0, -CARD_EXTENSION.length);
      cards.push(parseCardFile(file, readCardText(file), { provider, model }));
    }
    catalog.set(provider, cards);
  }
  return catalog;
}

/**
 * Finds a specifier's card in a loaded catalog: the exact model, else the longest card name that the
 * model extends at a separator (`gpt-4o-2024-08-06` → `gpt-4o`), else the provider's `any` card, else
 * the generic card with a warning.
 */
export function findCard(
  catalog: ModelCatalog,
  specifier: string | ModelSpec,
  providerReportedContextTokens?: number,
): ResolvedCard {
  const parsed = typeof specifier === 'string' ? parseModelSpec(specifier) : specifier;
  const spec = formatModelSpec(parsed);
  const reported = validWindow(providerReportedContextTokens);
  const base = reported === undefined ? { spec } : { spec, providerReportedContextTokens: reported };
  const cards = catalog.get(parsed.provider) ?? [];

  const exact = cards.find((card) => card.model === parsed.model);
  if (exact !== undefined) return { ...base, card: exact, match: 'exact' };

  const prefix = longestPrefixCard(cards, parsed.model);
  if (prefix !== undefined) {
    const remainder = parsed.model.slice(prefix.model.length);
    if (SNAPSHOT_SUFFIX.test(remainder)) return { ...base, card: prefix, match: 'prefix' };
    return {
      ...base,
      card: prefix,
      match: 'prefix',
      warning:
        `no model card for ${spec}; using the card of ${parsed.provider}:${prefix.model} (closest prefix), ` +
        `whose prices may not apply; add models/cards/${parsed.provider}/${parsed.model}.json to fix`,
    };
  }

  const anyModel = cards.find((card) => card.model === ANY_MODEL_CARD);
  if (anyModel !== undefined) return { ...base, card: anyModel, match: 'provider' };

  const window = reported ?? GENERIC_CONTEXT_TOKENS;
  return {
    ...base,
    card: GENERIC_CARD,
    match: 'generic',
    warning: `no model card for ${spec}; using a conservative generic card (${window}-token window)`,
  };
}

/** Loads the catalog and resolves one specifier (see findCard). Throws ConfigError for a bad specifier or card. */
export function resolveCard(specifier: string | ModelSpec, options: ResolveCardOptions = {}): ResolvedCard {
  return findCard(loadCatalog(options.cardsDir), specifier, options.providerReportedContextTokens);
}

/** Resolves the primary and the optional backup model against one load of the catalog. */
export function resolveCards(
  models: { primary: string | ModelSpec; backup?: string | ModelSpec },
  options: { cardsDir?: string } = {},
): ResolvedCards {
  const catalog = loadCatalog(options.cardsDir);
  const primary = findCard(catalog, models.primary);
  const backup = models.backup === undefined ? undefined : findCard(catalog, models.backup);
  const warnings = [primary.warning, backup?.warning].filter((w): w is string => w !== undefined);
  return backup === undefined ? { primary, warnings } : { primary, backup, warnings };
}

function longestPrefixCard(cards: readonly ModelCard[], model: string): ModelCard | undefined {
  let best: ModelCard | undefined;
  for (const card of cards) {
    if (!model.startsWith(card.model) || model.length === card.model.length) continue;
    // `gpt-4.10` must not match `gpt-4.1`: the name has to end where a separator starts.
    if (isAlphanumeric(model.charCodeAt(card.model.length))) continue;
    if (best === undefined || card.model.length > best.model.length) best = card;
  }
  return best;
}

function isAlphanumeric(code: number): boolean {
  return (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122);
}

function validWindow(tokens: number | undefined): number | undefined {
  return tokens !== undefined && Number.isSafeInteger(tokens) && tokens > 0 ? tokens : undefined;
}

function isDirectory(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

function readCardText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`model card ${file} cannot be read: ${(err as Error).message}`);
  }
}
