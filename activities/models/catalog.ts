/**
 * The model catalog (spec F-CARDS): resolves a `provider:model` specifier to its card from the
 * provider-owned folders under `models/cards/`, falling back to the conservative generic card (with a
 * warning) for a model nobody wrote a card for. Also resolves the deployment's primary and backup cards.
 */
import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError } from '../../core/errors';
import { GENERIC_CARD, type ModelCard } from '../../core/model-card';
import { cardLacksPrices } from '../../core/spend-cap';
import { formatModelSpec, type ModelSpec, parseModelSpec } from '../providers/spec';
import { parseCardFile } from './card-file';
import {
  CARD_EXTENSION,
  type CardMatch,
  cardsDir,
  chooseCard,
  listCardFiles,
  USER_CARDS_SUBDIR,
  userCardDirs,
} from './card-names';

export {
  ANY_MODEL_CARD,
  type CardMatch,
  cardsDir,
  PROJECT_CARDS_SUBDIR,
  USER_CARDS_SUBDIR,
  userCardDirs,
  workspaceCardsNote,
} from './card-names';

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
  /** User card folders over the package's (userCardDirs), later ones winning. */
  overlayDirs?: readonly string[];
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
 * Reads and validates every card under `dir`. Throws ConfigError naming the file and field of the first
 * invalid card, or a folder that names no provider: a broken card must not silently mean "no card".
 */
export function loadCatalog(dir: string = cardsDir(), overlayDirs: readonly string[] = []): ModelCatalog {
  const catalog = new Map<string, ModelCard[]>();
  for (const [provider, files] of listCardFiles(dir)) {
    catalog.set(
      provider,
      files.map(({ file, model }) => parseCardFile(file, readCardText(file), { provider, model })),
    );
  }
  // A user's card (GOALRUN_HOME) replaces the package's card of the same model.
  for (const overlay of overlayDirs) {
    if (!existsSync(overlay)) continue;
    for (const [provider, files] of listCardFiles(overlay)) {
      const cards = [...(catalog.get(provider) ?? [])];
      for (const { file, model } of files) {
        const card = parseCardFile(file, readCardText(file), { provider, model });
        const at = cards.findIndex((known) => known.model === model);
        if (at >= 0) cards[at] = card;
        else cards.push(card);
      }
      catalog.set(provider, cards);
    }
  }
  return catalog;
}

/** The GOALRUN_HOME of this process (as worker/settings.ts reads it; activities do not load the settings). */
export function homeOfProcess(env: NodeJS.ProcessEnv = process.env): string {
  return path.resolve(env.GOALRUN_HOME || path.join(os.homedir(), '.goalrun'));
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
  const reported = validWindow(providerReportedContextTokens);
  const choice = chooseCard(catalog.get(parsed.provider) ?? [], parsed, reported);
  return {
    spec: formatModelSpec(parsed),
    ...(reported === undefined ? {} : { providerReportedContextTokens: reported }),
    card: choice.card ?? GENERIC_CARD,
    match: choice.match,
    ...(choice.warning === undefined ? {} : { warning: choice.warning }),
  };
}

/** Loads the catalog and resolves one specifier (see findCard). Throws ConfigError for a bad specifier or card. */
export function resolveCard(specifier: string | ModelSpec, options: ResolveCardOptions = {}): ResolvedCard {
  return findCard(
    loadCatalog(options.cardsDir, options.overlayDirs),
    specifier,
    options.providerReportedContextTokens,
  );
}

/**
 * Why a model cannot run under a money cap: its card (from the package or `$GOALRUN_HOME/cards`,
 * never a workspace) has no prices, so its calls would count $0. Names where a card goes; null when
 * the model has prices.
 */
export function unpricedReason(model: string, home: string): string | null {
  const parsed = parseModelSpec(model);
  const resolved = resolveCard(parsed, { overlayDirs: userCardDirs(home) });
  if (!cardLacksPrices(resolved.card)) return null;
  const file = path.join(home, USER_CARDS_SUBDIR, parsed.provider, `${parsed.model}${CARD_EXTENSION}`);
  return `${resolved.spec} has no model card with prices (${
    resolved.match === 'generic' ? 'no card at all' : 'its card has none'
  }): put a card with its prices at ${file}, in the schema of the package's models/cards (see docs/configuration.md)`;
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

function validWindow(tokens: number | undefined): number | undefined {
  return tokens !== undefined && Number.isSafeInteger(tokens) && tokens > 0 ? tokens : undefined;
}

function readCardText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`model card ${file} cannot be read: ${(err as Error).message}`);
  }
}
