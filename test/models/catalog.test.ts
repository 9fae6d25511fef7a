import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseCardFile } from '../../activities/models/card-file';
import { cardWarning } from '../../activities/models/card-names';
import {
  cardsDir,
  findCard,
  loadCatalog,
  resolveCard,
  resolveCards,
  unpricedReason,
  userCardDirs,
  workspaceCardsNote,
} from '../../activities/models/catalog';
import { PROVIDER_NAMES } from '../../activities/providers/spec';
import { computeBudget } from '../../core/budget';
import { ConfigError } from '../../core/errors';
import { GENERIC_CARD } from '../../core/model-card';

const REPO_ROOT = path.resolve(__dirname, '../..');

/** Cards that must ship, by provider (others may be added). */
const SHIPPED = {
  openai: ['gpt-4.1', 'gpt-4.1-mini', 'gpt-4o', 'gpt-4o-mini'],
  anthropic: ['claude-haiku-4-5', 'claude-opus-4-1', 'claude-sonnet-4-5'],
  ollama: ['llama3.1'],
};

const tempDirs: string[] = [];
afterEach(() => {
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A card folder in a temp directory with the given files (path under the folder → content). */
function tempCards(files: Record<string, unknown>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'goalrun-cards-'));
  tempDirs.push(dir);
  for (const [file, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), typeof content === 'string' ? content : JSON.stringify(content));
  }
  return dir;
}

function validCard(
  provider: string,
  model: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    provider,
    model,
    advertisedContextTokens: 100_000,
    maxOutputTokens: 8_000,
    prices: { inputPerMTok: 1, outputPerMTok: 2, cacheReadPerMTok: 0.1, cacheWritePerMTok: 1 },
    source: 'test',
    ...extra,
  };
}

describe('the shipped model cards', () => {
  it('are found under the package root from the sources', () => {
    expect(cardsDir()).toBe(path.join(REPO_ROOT, 'models', 'cards'));
  });

  it('all validate, sit in provider folders, and name their source', () => {
    const catalog = loadCatalog();
    for (const [provider, models] of Object.entries(SHIPPED)) {
      const cards = catalog.get(provider) ?? [];
      expect(cards.map((c) => c.model)).toEqual(expect.arrayContaining(models));
      for (const card of cards) {
        expect(card.provider).toBe(provider);
        expect(card.source).toMatch(/writer's knowledge/);
        // Each card says when its prices were last compared with the provider's (issue 18).
        expect(card.pricesChecked).toMatch(/^\d{4}-\d{2}-\d{2}$/);
        expect(card.maxOutputTokens).toBeLessThanOrEqual(card.advertisedContextTokens);
      }
    }
    for (const provider of catalog.keys()) expect(PROVIDER_NAMES).toContain(provider);
    // Every file on disk was loaded: nothing is skipped for a wrong extension.
    for (const provider of readdirSync(cardsDir())) {
      expect(readdirSync(path.join(cardsDir(), provider)).every((f) => f.endsWith('.json'))).toBe(true);
    }
  });

  it('give every shipped model a budget whose thresholds are in order', () => {
    for (const [provider, models] of Object.entries(SHIPPED)) {
      for (const model of models) {
        const budget = computeBudget(resolveCard(`${provider}:${model}`));
        expect(budget.warnAtTokens).toBeLessThan(budget.compactAtTokens);
        expect(budget.compactAtTokens).toBeLessThan(budget.stopAtTokens);
      }
    }
  });
});

describe('resolveCard', () => {
  it('resolves an exact model name without a warning', () => {
    const resolved = resolveCard('openai:gpt-4o');
    expect(resolved).toMatchObject({ spec: 'openai:gpt-4o', match: 'exact' });
    expect(resolved.card.model).toBe('gpt-4o');
    expect(resolved.warning).toBeUndefined();
  });

  it('resolves a dated snapshot or a tag to the longest matching card, silently', () => {
    expect(resolveCard('openai:gpt-4o-2024-08-06')).toMatchObject({
      match: 'prefix',
      card: { model: 'gpt-4o' },
    });
    expect(resolveCard('openai:gpt-4o-mini-2024-07-18').card.model).toBe('gpt-4o-mini');
    expect(resolveCard('openai:gpt-4.1-mini-2025-04-14').card.model).toBe('gpt-4.1-mini');
    expect(resolveCard('anthropic:claude-sonnet-4-5-20250929').card.model).toBe('claude-sonnet-4-5');
    const tagged = resolveCard('ollama:llama3.1:8b');
    expect(tagged).toMatchObject({
      spec: 'ollama:llama3.1:8b',
      match: 'prefix',
      card: { model: 'llama3.1' },
    });
    expect(tagged.warning).toBeUndefined();
  });

  it('uses a sibling model card with a warning when the rest of the name is not a snapshot', () => {
    const resolved = resolveCard('openai:gpt-4.1-nano');
    expect(resolved.card.model).toBe('gpt-4.1');
    expect(resolved.warning).toBe(
      'no model card for openai:gpt-4.1-nano; using the card of openai:gpt-4.1 (closest prefix), ' +
        'whose prices may not apply; add models/cards/openai/gpt-4.1-nano.json to fix',
    );
  });

  it('matches a prefix only where the model name ends at a separator', () => {
    expect(resolveCard('openai:gpt-4.10').match).toBe('generic');
    expect(resolveCard('openai:gpt-4oo').match).toBe('generic');
    // A card of another provider is never used.
    expect(resolveCard('openai-compatible:gpt-4o').match).toBe('generic');
  });

  it('gives every scripted model the scripted card, without a warning', () => {
    for (const spec of ['scripted:/tmp/turns.json', 'scripted:/home/me/demo/model-2026.json']) {
      const resolved = resolveCard(spec);
      expect(resolved).toMatchObject({ match: 'provider', card: { provider: 'scripted', model: 'any' } });
      expect(resolved.warning).toBeUndefined();
    }
  });

  it('falls back to the generic card with a warning for unknown models', () => {
    for (const spec of ['openai-compatible:my-local-model', 'anthropic:claude-2']) {
      const resolved = resolveCard(spec);
      expect(resolved.card).toBe(GENERIC_CARD);
      expect(resolved.match).toBe('generic');
      expect(resolved.warning).toBe(
        `no model card for ${spec}; using a conservative generic card (32000-token window)`,
      );
    }
  });

  it('passes a provider-reported window on to the budget, and names it in the generic warning', () => {
    const reported = resolveCard('openai-compatible:local', { providerReportedContextTokens: 8_192 });
    expect(reported.providerReportedContextTokens).toBe(8_192);
    expect(reported.warning).toContain('(8192-token window)');
    expect(computeBudget(reported)).toMatchObject({ windowTokens: 8_192, windowSource: 'provider-reported' });
    const ollama = resolveCard('ollama:llama3.1', { providerReportedContextTokens: 32_768 });
    expect(computeBudget(ollama).windowTokens).toBe(32_768);
    // Without a report, Ollama's guaranteed default window is enforced, not the advertised 128k.
    expect(computeBudget(resolveCard('ollama:llama3.1'))).toMatchObject({ windowSource: 'guaranteed' });
    expect(resolveCard('openai:gpt-4o', { providerReportedContextTokens: 0 })).not.toHaveProperty(
      'providerReportedContextTokens',
    );
  });

  it('rejects an invalid specifier as ConfigError', () => {
    expect(() => resolveCard('gpt-4o')).toThrow(ConfigError);
    expect(() => resolveCard('nope:gpt-4o')).toThrow(/unknown provider "nope"/);
  });

  it('reads cards from another folder when asked', () => {
    const dir = tempCards({ 'openai/house-model.json': validCard('openai', 'house-model') });
    expect(resolveCard('openai:house-model', { cardsDir: dir })).toMatchObject({ match: 'exact' });
    expect(resolveCard('openai:gpt-4o', { cardsDir: dir }).match).toBe('generic');
  });
});

describe('user cards (GOALRUN_HOME only: never a workspace, issue 24 §3)', () => {
  it('add a model and override a shipped card; a workspace card is never read', () => {
    const home = tempCards({
      'cards/openai-compatible/house.json': validCard('openai-compatible', 'house'),
      'cards/openai/gpt-4o.json': validCard('openai', 'gpt-4o', { maxOutputTokens: 1_000 }),
    });
    const workspace = tempCards({
      '.goalrun/cards/openai/gpt-4o.json': validCard('openai', 'gpt-4o', { maxOutputTokens: 2_000 }),
    });
    const overlayDirs = userCardDirs(home);
    expect(overlayDirs).toEqual([path.join(home, 'cards')]);
    expect(resolveCard('openai-compatible:house', { overlayDirs })).toMatchObject({ match: 'exact' });
    expect(resolveCard('openai:gpt-4o', { overlayDirs }).card.maxOutputTokens).toBe(1_000);
    // The shipped cards the user did not override are still there; a missing folder is no error.
    expect(resolveCard('openai:gpt-4.1', { overlayDirs }).match).toBe('exact');
    expect(resolveCard('openai:gpt-4.1', { overlayDirs: ['/nonexistent/cards'] }).match).toBe('exact');
    // A workspace's cards are looked at only to say they are not read.
    expect(workspaceCardsNote(workspace)).toMatch(
      /\.goalrun\/cards: not read: model cards come from the package/,
    );
    expect(workspaceCardsNote(home)).toBeNull();
  });

  it('are validated like the shipped ones, naming the file', () => {
    const home = tempCards({ 'cards/openai/bad.json': { provider: 'openai', model: 'bad' } });
    expect(() => resolveCard('openai:bad', { overlayDirs: userCardDirs(home) })).toThrow(
      /cards\/openai\/bad\.json is invalid/,
    );
  });

  it('say why a model cannot run under a money cap: no card with prices, and where one goes', () => {
    const home = tempCards({
      'cards/openai-compatible/priced.json': validCard('openai-compatible', 'priced'),
    });
    expect(unpricedReason('openai-compatible:priced', home)).toBeNull();
    expect(unpricedReason('openai-compatible:other', home)).toBe(
      `openai-compatible:other has no model card with prices (no card at all): put a card with its prices at ${path.join(home, 'cards', 'openai-compatible', 'other.json')}, in the schema of the package's models/cards (see docs/configuration.md)`,
    );
  });
});

describe('cardWarning (what `goalrun status` says about a model, from the file names only)', () => {
  it('says what resolveCard says, for every kind of match', () => {
    for (const specifier of [
      'openai:gpt-4o',
      'openai:gpt-4o-2024-08-06',
      'openai:gpt-4.1-nano',
      'openai:gpt-4.10',
      'anthropic:claude-sonnet-4-5@20250929',
      'ollama:llama3.1:8b',
      'scripted:/tmp/turns.json',
      'openai-compatible:some-local-model',
      'openai:no-such-model',
    ]) {
      expect(cardWarning(specifier), specifier).toBe(resolveCard(specifier).warning);
    }
  });

  it('throws for a specifier resolveCard refuses too', () => {
    expect(() => cardWarning('gpt-4o')).toThrow(ConfigError);
    expect(() => cardWarning('openai:gpt-4o', path.join(tmpdir(), 'goalrun-no-such-cards'))).toThrow(
      /does not exist/,
    );
  });
});

describe('resolveCards', () => {
  it('resolves the primary and the backup card and collects their warnings', () => {
    const cards = resolveCards({
      primary: 'anthropic:claude-sonnet-4-5',
      backup: 'openai-compatible:fallback',
    });
    expect(cards.primary.card.model).toBe('claude-sonnet-4-5');
    expect(cards.backup?.match).toBe('generic');
    expect(cards.warnings).toEqual([
      'no model card for openai-compatible:fallback; using a conservative generic card (32000-token window)',
    ]);
  });

  it('has no backup when none is configured', () => {
    const cards = resolveCards({ primary: 'openai:gpt-4o' });
    expect(cards).not.toHaveProperty('backup');
    expect(cards.warnings).toEqual([]);
  });
});

describe('cache prices (issue 26 item 9)', () => {
  it('default to the input price when a card leaves them out', () => {
    const card = parseCardFile(
      'm.json',
      JSON.stringify(
        validCard('openai-compatible', 'm', { prices: { inputPerMTok: 0.5, outputPerMTok: 1.5 } }),
      ),
    );
    expect(card.prices).toEqual({
      inputPerMTok: 0.5,
      outputPerMTok: 1.5,
      cacheReadPerMTok: 0.5,
      cacheWritePerMTok: 0.5,
    });
    const readOnly = parseCardFile(
      'm.json',
      JSON.stringify(
        validCard('openai-compatible', 'm', {
          prices: { inputPerMTok: 2, outputPerMTok: 4, cacheReadPerMTok: 0.2 },
        }),
      ),
    );
    expect(readOnly.prices).toMatchObject({ cacheReadPerMTok: 0.2, cacheWritePerMTok: 2 });
    // Given ones are kept, a misspelt one is still an error.
    expect(parseCardFile('m.json', JSON.stringify(validCard('openai', 'm'))).prices).toMatchObject({
      cacheReadPerMTok: 0.1,
      cacheWritePerMTok: 1,
    });
    expect(() =>
      parseCardFile(
        'm.json',
        JSON.stringify(
          validCard('openai', 'm', { prices: { inputPerMTok: 1, outputPerMTok: 1, cacheRead: 0 } }),
        ),
      ),
    ).toThrow('field "prices.cacheRead": unknown field');
  });
});

describe('invalid card files', () => {
  it('name the file and the field', () => {
    const bad = validCard('openai', 'broken');
    bad.prices = { inputPerMTok: '2.5', outputPerMTok: 10, cacheReadPerMTok: 1, cacheWritePerMTok: 2 };
    const dir = tempCards({ 'openai/broken.json': bad });
    const file = path.join(dir, 'openai', 'broken.json');
    expect(() => loadCatalog(dir)).toThrow(ConfigError);
    expect(() => loadCatalog(dir)).toThrow(
      `model card ${file} is invalid: field "prices.inputPerMTok": Invalid input: expected number, received string`,
    );
  });

  it('name a missing field, an unknown (misspelt) field and a non-integer window', () => {
    const card = validCard('openai', 'm');
    delete card.maxOutputTokens;
    expect(() => parseCardFile('m.json', JSON.stringify(card))).toThrow(/field "maxOutputTokens"/);
    expect(() =>
      parseCardFile('m.json', JSON.stringify({ ...validCard('openai', 'm'), guaranteedContext: 1 })),
    ).toThrow('model card m.json is invalid: field "guaranteedContext": unknown field');
    expect(() =>
      parseCardFile('m.json', JSON.stringify(validCard('openai', 'm', { advertisedContextTokens: 1.5 }))),
    ).toThrow(/field "advertisedContextTokens"/);
  });

  it('reject a guaranteed window or output ceiling above the advertised window', () => {
    expect(() =>
      parseCardFile('m.json', JSON.stringify(validCard('openai', 'm', { guaranteedContextTokens: 200_000 }))),
    ).toThrow(
      'model card m.json is invalid: field "guaranteedContextTokens": must not exceed advertisedContextTokens',
    );
    expect(() =>
      parseCardFile('m.json', JSON.stringify(validCard('openai', 'm', { maxOutputTokens: 200_000 }))),
    ).toThrow(/field "maxOutputTokens": must not exceed/);
  });

  it('reject text that is not JSON', () => {
    const dir = tempCards({ 'openai/m.json': '{ "provider": ' });
    expect(() => loadCatalog(dir)).toThrow(/model card .*m\.json is not valid JSON/);
  });

  it('reject a card whose provider or model disagrees with its folder or file name', () => {
    const wrongProvider = tempCards({ 'openai/m.json': validCard('anthropic', 'm') });
    expect(() => loadCatalog(wrongProvider)).toThrow(
      /field "provider" is "anthropic" but the card is in the "openai" folder/,
    );
    const wrongModel = tempCards({ 'openai/m.json': validCard('openai', 'other') });
    expect(() => loadCatalog(wrongModel)).toThrow(/field "model" is "other" but the file is named for "m"/);
  });

  it('reject a folder that names no provider and a card folder that does not exist', () => {
    const dir = tempCards({ 'opneai/m.json': validCard('opneai', 'm') });
    expect(() => loadCatalog(dir)).toThrow(/opneai names no provider; expected one of openai, anthropic/);
    expect(() => loadCatalog(path.join(dir, 'missing'))).toThrow(
      /model card folder .*missing does not exist/,
    );
  });

  it('ignore files that are not cards', () => {
    const dir = tempCards({
      'README.md': '# cards',
      'openai/notes.txt': 'x',
      'openai/m.json': validCard('openai', 'm'),
    });
    expect(findCard(loadCatalog(dir), 'openai:m').match).toBe('exact');
  });
});
