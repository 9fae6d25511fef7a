/**
 * Context windows that a provider reports itself. The budget enforces a reported window before
 * the card's (spec F-BUDGET): Ollama runs a model with its configured `num_ctx`, which is often far
 * smaller than what the model could take.
 */
import { log } from '@temporalio/activity';
import { parseModelSpec, resolveProviderSettings } from '../providers/spec';
import type { ProviderEnv } from '../providers/types';

/** How long goalrun waits for a provider to say its window before it uses the card. */
export const PROVIDER_WINDOW_TIMEOUT_MS = 3_000;

/** The window Ollama reports for a model: its `num_ctx` parameter, else the model's trained length. */
export function ollamaWindowOf(show: unknown): number | undefined {
  if (!show || typeof show !== 'object') return undefined;
  const { parameters, model_info: info } = show as {
    parameters?: unknown;
    model_info?: Record<string, unknown>;
  };
  if (typeof parameters === 'string') {
    const match = /^\s*num_ctx\s+(\d+)\s*$/m.exec(parameters);
    if (match) return Number(match[1]);
  }
  for (const [key, value] of Object.entries(info ?? {})) {
    if (key.endsWith('.context_length') && typeof value === 'number' && value > 0) return value;
  }
  return undefined;
}

/** Asks the provider for the model's window; undefined when it has no such API or does not answer. */
export async function providerReportedWindow(
  spec: string,
  env: ProviderEnv,
  baseUrl?: string,
): Promise<number | undefined> {
  const parsed = parseModelSpec(spec);
  if (parsed.provider !== 'ollama') return undefined;
  const settings = resolveProviderSettings(parsed, env, baseUrl);
  // Ollama's native API lives beside its OpenAI-compatible /v1 endpoint.
  const root = (settings.baseUrl ?? '').replace(/\/v1\/?$/, '');
  try {
    const response = await fetch(`${root}/api/show`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: parsed.model }),
      signal: AbortSignal.timeout(PROVIDER_WINDOW_TIMEOUT_MS),
    });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    return ollamaWindowOf(await response.json());
  } catch (err) {
    log.warn(`could not ask Ollama for the window of ${parsed.model}; using its model card`, {
      error: (err as Error).message,
    });
    return undefined;
  }
}
