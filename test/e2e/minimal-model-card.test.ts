/**
 * Issue 26 item 9: the minimal model card of docs/configuration.md (five fields), as a user writes it for an
 * `openai-compatible` endpoint (no cache prices), is accepted as priced by a money cap, and a
 * provider's cache reads are counted at the input price.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli';
import { goalTestEnv } from '../support/goal-env';
import { goalArgs } from '../support/goal-steps';
import { type OpenAITestServer, startOpenAITestServer } from '../support/openai-test-server';

const DOCS = path.resolve(__dirname, '../../docs/configuration.md');

/** The card the docs show under "A minimal card" (the first json block after it). */
function documentedCard(): { text: string; card: { provider: string; model: string } } {
  const docs = fs.readFileSync(DOCS, 'utf8');
  const after = docs.slice(docs.indexOf('A minimal card'));
  const block = /```json\n([\s\S]*?)```/.exec(after);
  if (!block) throw new Error('docs/configuration.md has no minimal card');
  return { text: block[1], card: JSON.parse(block[1]) };
}

describe('a minimal model card', () => {
  let server: OpenAITestServer;
  beforeAll(async () => {
    server = await startOpenAITestServer();
  });
  afterAll(async () => server?.close());

  it('has only the required fields, prices a money cap, and counts cache reads at the input price', async () => {
    const { text, card } = documentedCard();
    // Five fields, the prices of input and output only: a card of 7 lines as the formatter lays it out.
    expect(Object.keys(card)).toEqual([
      'provider',
      'model',
      'advertisedContextTokens',
      'maxOutputTokens',
      'prices',
    ]);
    expect(Object.keys((card as unknown as { prices: object }).prices)).toEqual([
      'inputPerMTok',
      'outputPerMTok',
    ]);
    expect(text.trimEnd().split('\n').length).toBeLessThanOrEqual(7);
    const t = goalTestEnv('minimal-card');
    const dir = path.join(t.home, 'cards', card.provider);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, `${card.model}.json`), text);

    // $0.50 in, $1.50 out per million: 1,000,000 input tokens (400,000 of them cache reads) and
    // 100,000 output tokens cost $0.50 + $0.15, the cache reads at the input price.
    server.enqueue({
      toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'priced' } }],
      usage: { prompt_tokens: 1_000_000, completion_tokens: 100_000, cached_tokens: 400_000 },
    });
    const result = await runCli(
      goalArgs(
        'run',
        'say done',
        t,
        server,
        ['--json', '--max-cost-usd', '5'],
        `${card.provider}:${card.model}`,
      ),
      t.env,
    );
    expect(result.code, result.stderr).toBe(0);
    const shown = JSON.parse(result.stdout);
    expect(shown.budget.spentUsd).toBeCloseTo(0.65, 9);
    expect(result.stderr).not.toContain('no model card');
  });
});
