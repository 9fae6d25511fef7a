/**
 * What `goalrun stats` says about failover (issue 27 §3): the model steps each model ran (its
 * requests, less summaries and billed retries) and where the goal is now. Pure.
 */
import type { UsageBreakdown } from './cost';
import type { FailoverState } from './failover';

/** Model steps per model: the answers each model gave to the goal's steps. */
export function stepsPerModel(breakdown: UsageBreakdown): Record<string, number> {
  const steps: Record<string, number> = {};
  for (const [model, usage] of Object.entries(breakdown)) {
    steps[model] = Math.max(0, usage.requests - usage.summarizerRequests - (usage.retries?.requests ?? 0));
  }
  return steps;
}

/** The failover part of `stats --json`: null when the goal never switched. */
export function failoverView(
  state: FailoverState | null | undefined,
  model: string,
): {
  active: 'primary' | 'backup';
  primary: string;
  model: string;
  switches: number;
  probeAtMs: number | null;
} | null {
  if (!state) return null;
  return {
    active: state.active,
    primary: state.primary.model,
    model,
    switches: state.switches,
    probeAtMs: state.probeAtMs,
  };
}

/** The text lines of `stats`: steps per model, and the failover state when the goal switched. */
export function renderFailoverStats(
  steps: Record<string, number>,
  view: ReturnType<typeof failoverView>,
): string[] {
  const models = Object.keys(steps).sort();
  const lines =
    models.length > 1 ? [`steps per model:  ${models.map((m) => `${m} ${steps[m]}`).join(', ')}`] : [];
  if (view) {
    const where = view.active === 'backup' ? `on the backup ${view.model}` : `on the primary ${view.primary}`;
    lines.push(`failover:         ${view.switches} switch${view.switches === 1 ? '' : 'es'}, now ${where}`);
  }
  return lines;
}
