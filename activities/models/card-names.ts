/**
 * Which card a model specifier gets (spec F-CARDS), decided by card names alone: the exact model,
 * else the longest card name the model extends at a separator, else the provider's `any` card, else
 * the generic card. catalog.ts applies it to the parsed cards; `goalrun status` asks only for the
 * warning, from the file names, so it reads no card and loads no schema (issue 10).
 */
import { existsSync, lstatSync, readdirSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { ConfigError } from '../../core/errors';
import { GENERIC_CONTEXT_TOKENS } from '../../core/model-card';
import { formatModelSpec, type ModelSpec, PROVIDER_NAMES, parseModelSpec } from '../providers/model-spec';

/** Card files live in `<package root>/models/cards/<provider>/<model>.json`. */
const CARDS_SUBDIR = ['models', 'cards'];
/** The extension of a card file. */
export const CARD_EXTENSION = '.json';
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

/** What matching needs of a card: its model name. */
export interface NamedCard {
  model: string;
}

/** The card a specifier matched (undefined for the generic card), and what to tell the user about it. */
export interface CardChoice<Card extends NamedCard> {
  spec: string;
  card: Card | undefined;
  match: CardMatch;
  warning?: string;
}

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
 * The card files under `dir` by provider folder, sorted: `{provider, model, file}`. Throws
 * ConfigError for a missing folder or a folder that names no provider.
 */
export function listCardFiles(dir: string = cardsDir()): Map<string, Array<NamedCard & { file: string }>> {
  if (!isDirectory(dir)) throw new ConfigError(`model card folder ${dir} does not exist`);
  const files = new Map<string, Array<NamedCard & { file: string }>>();
  for (const provider of readdirSync(dir).sort()) {
    const providerDir = path.join(dir, provider);
    // Loose files beside the provider folders (a README) are not cards.
    if (!isDirectory(providerDir)) continue;
    if (!(PROVIDER_NAMES as readonly string[]).includes(provider)) {
      throw new ConfigError(
        `model card folder ${providerDir} names no provider; expected one of ${PROVIDER_NAMES.join(', ')}`,
      );
    }
    const cards = readdirSync(providerDir)
      .sort()
      .filter((name) => name.endsWith(CARD_EXTENSION))
      .map((name) => ({ model: name.slice(0, -CARD_EXTENSION.length), file: path.join(providerDir, name) }));
    files.set(provider, cards);
  }
  return files;
}

/** Chooses a specifier's card among its provider's cards (see the file comment). */
export function chooseCard<Card extends NamedCard>(
  cards: readonly Card[],
  parsed: ModelSpec,
  reportedWindow?: number,
): CardChoice<Card> {
  const spec = formatModelSpec(parsed);
  const exact = cards.find((card) => card.model === parsed.model);
  if (exact !== undefined) return { spec, card: exact, match: 'exact' };

  const prefix = longestPrefixCard(cards, parsed.model);
  if (prefix !== undefined) {
    const remainder = parsed.model.slice(prefix.model.length);
    if (SNAPSHOT_SUFFIX.test(remainder)) return { spec, card: prefix, match: 'prefix' };
    return {
      spec,
      card: prefix,
      match: 'prefix',
      warning:
        `no model card for ${spec}; using the card of ${parsed.provider}:${prefix.model} (closest prefix), ` +
        `whose prices may not apply; add models/cards/${parsed.provider}/${parsed.model}.json to fix`,
    };
  }

  const anyModel = cards.find((card) => card.model === ANY_MODEL_CARD);
  if (anyModel !== undefined) return { spec, card: anyModel, match: 'provider' };

  const window = reportedWindow ?? GENERIC_CONTEXT_TOKENS;
  return {
    spec,
    card: undefined,
    match: 'generic',
    warning: `no model card for ${spec}; using a conservative generic card (${window}-token window)`,
  };
}

/** Folder of user cards under GOALRUN_HOME. */
export const USER_CARDS_SUBDIR = 'cards';
/**
 * Where a workspace's cards were once read from. Never again (issue 24 §3): a card sets prices, and
 * the money cap counts by them, so a workspace file (the model's) may not set one.
 */
export const PROJECT_CARDS_SUBDIR = ['.goalrun', 'cards'];

/**
 * Where users add or override cards without touching the package: `$GOALRUN_HOME/cards/<provider>/
 * <model>.json`. Only there: prices come from the package and the user, never from a workspace.
 */
export function userCardDirs(home: string | undefined): string[] {
  return home ? [path.join(home, USER_CARDS_SUBDIR)] : [];
}

/** The note for a workspace that has a `.goalrun/cards` folder (looked at, never read), or null. */
export function workspaceCardsNote(workspace: string): string | null {
  const dir = path.join(workspace, ...PROJECT_CARDS_SUBDIR);
  try {
    lstatSync(dir);
  } catch {
    return null;
  }
  return `${dir}: not read: model cards come from the package and $GOALRUN_HOME/cards only (a workspace file never sets prices); move a card you wrote there to $GOALRUN_HOME/cards`;
}

/**
 * The warning resolveCard (catalog.ts) gives a specifier, from the card file names only (the user's
 * card folder, userCardDirs, included). It does not validate the cards: a broken card still fails
 * where cards are used (the worker, `policy`).
 */
export function cardWarning(
  specifier: string,
  dir: string = cardsDir(),
  overlayDirs: readonly string[] = [],
): string | undefined {
  const parsed = parseModelSpec(specifier);
  const names = [...(listCardFiles(dir).get(parsed.provider) ?? [])];
  for (const overlay of overlayDirs) {
    if (isDirectory(overlay)) names.push(...(listCardFiles(overlay).get(parsed.provider) ?? []));
  }
  return chooseCard(names, parsed).warning;
}

function longestPrefixCard<Card extends NamedCard>(cards: readonly Card[], model: string): Card | undefined {
  let best: Card | undefined;
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

function isDirectory(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}
