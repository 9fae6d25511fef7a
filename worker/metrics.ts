/**
 * goalrun's own Prometheus counters: model steps, tool calls by name, compactions, summarizer
 * tokens, tokens and cost by model. They are counted in the worker process by an activity
 * interceptor that reads each activity's input and result as it completes, so the activities
 * themselves know nothing about metrics. worker/metrics-endpoint.ts serves them, together with the
 * Temporal SDK's own runtime metrics, on `goalrun worker --metrics-port`.
 *
 * A retried activity counts once per execution that returned (a model step retried after its
 * answer was stored counts twice); everything else is counted exactly once.
 */
import type { Context as ActivityContext } from '@temporalio/activity';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { Counter, collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import type { SummarizeInput, SummarizeResult } from '../activities/compaction-activities';
import { resolveCard } from '../activities/models/catalog';
import type {
  AppendMessageInput,
  ModelStepInput,
  ModelStepResult,
  RunToolInput,
  RunToolResult,
} from '../activities/types';
import { costOf } from '../core/cost';
import { userTextOf } from '../core/messages';
import type { ModelCard } from '../core/model-card';
import { KEY_PREFIX } from '../core/store-keys';
import type { RequestUsage } from '../core/usage';

/** The registry of goalrun's metrics (the SDK's are served beside them, not in it). */
export const goalrunRegistry = new Registry();
// Process metrics (resident memory, heap, event loop lag) of the worker process.
collectDefaultMetrics({ register: goalrunRegistry });

const workflowCacheCapacity = new Gauge({
  name: 'goalrun_workflow_cache_capacity',
  help: 'Goals this worker keeps in memory between their tasks (sized from --max-memory, the cgroup or the machine).',
  registers: [goalrunRegistry],
});

/** Says how many goals the worker's cache holds (set once the worker is sized). */
export function recordWorkflowCacheCapacity(goals: number): void {
  workflowCacheCapacity.set(goals);
}

const modelSteps = new Counter({
  name: 'goalrun_model_steps_total',
  help: 'Model steps answered (modelStep activities that returned), by model.',
  labelNames: ['model'],
  registers: [goalrunRegistry],
});
const toolCalls = new Counter({
  name: 'goalrun_tool_calls_total',
  help: 'Tool calls the model made, by tool (workflow tools such as todo-write and finish included).',
  labelNames: ['tool'],
  registers: [goalrunRegistry],
});
const toolRuns = new Counter({
  name: 'goalrun_tool_runs_total',
  help: 'Workspace tool runs (runTool activities), by tool and outcome: ok, error (the tool reported a failure), failed (the activity threw).',
  labelNames: ['tool', 'outcome'],
  registers: [goalrunRegistry],
});
const compactions = new Counter({
  name: 'goalrun_compactions_total',
  help: 'Compactions, by stage: pruned (no summary needed), summarized, discarded (would not shrink the context).',
  labelNames: ['stage'],
  registers: [goalrunRegistry],
});
const summarizerCalls = new Counter({
  name: 'goalrun_summarizer_calls_total',
  help: 'Summaries made for compaction, by model and source: model, or extracted from the transcript.',
  labelNames: ['model', 'source'],
  registers: [goalrunRegistry],
});
const summarizerTokens = new Counter({
  name: 'goalrun_summarizer_tokens_total',
  help: 'Tokens the compaction summarizer used, by model and direction (input, output).',
  labelNames: ['model', 'direction'],
  registers: [goalrunRegistry],
});
const tokens = new Counter({
  name: 'goalrun_tokens_total',
  help: 'Tokens by model, kind (input, output, cache_read, cache_write) and purpose (step, summary).',
  labelNames: ['model', 'kind', 'purpose'],
  registers: [goalrunRegistry],
});
const cost = new Counter({
  name: 'goalrun_cost_usd_total',
  help: "Cost in US dollars by model and purpose (step, summary), at the prices of the model's card.",
  labelNames: ['model', 'purpose'],
  registers: [goalrunRegistry],
});

/** What a compaction's notice says about its stage (the format is core/compaction/notice.ts's). */
export function compactionStageOf(noticeText: string): 'pruned' | 'summarized' | 'discarded' | null {
  const text = noticeText.replace(/^\[goalrun\]\s*/, '');
  if (text.startsWith('compaction discarded')) return 'discarded';
  if (!text.startsWith('compacted ')) return null;
  return /\bsummarized \d+ message/.test(text) ? 'summarized' : 'pruned';
}

const cards = new Map<string, ModelCard | null>();

/** The model's card for pricing, resolved once per model; null when it has none. */
function cardOf(model: string): ModelCard | null {
  if (!cards.has(model)) {
    try {
      cards.set(model, resolveCard(model).card);
    } catch {
      cards.set(model, null);
    }
  }
  return cards.get(model) ?? null;
}

function countUsage(model: string, usage: RequestUsage, purpose: 'step' | 'summary'): void {
  tokens.inc({ model, kind: 'input', purpose }, usage.inputTokens);
  tokens.inc({ model, kind: 'output', purpose }, usage.outputTokens);
  tokens.inc({ model, kind: 'cache_read', purpose }, usage.cacheReadTokens);
  tokens.inc({ model, kind: 'cache_write', purpose }, usage.cacheWriteTokens);
  const card = cardOf(model);
  if (card) cost.inc({ model, purpose }, costOf(usage, card));
}

/** Counts what one completed activity did. Exported for tests; the interceptor calls it. */
export function recordActivity(activityType: string, input: unknown, result: unknown): void {
  switch (activityType) {
    case 'modelStep': {
      const { model } = input as ModelStepInput;
      const step = result as ModelStepResult;
      modelSteps.inc({ model });
      for (const call of step.toolCalls) toolCalls.inc({ tool: call.toolName });
      countUsage(model, step.usage, 'step');
      break;
    }
    case 'runTool': {
      const run = result as RunToolResult;
      toolRuns.inc({ tool: (input as RunToolInput).toolName, outcome: run.ok ? 'ok' : 'error' });
      break;
    }
    case 'summarize': {
      const { model } = input as SummarizeInput;
      const summary = result as SummarizeResult;
      // A summary already stored (a retry) returns without usage and was counted the first time.
      if (!summary.extracted && !summary.usage) break;
      summarizerCalls.inc({ model, source: summary.extracted ? 'extracted' : 'model' });
      if (summary.usage) {
        summarizerTokens.inc({ model, direction: 'input' }, summary.usage.inputTokens);
        summarizerTokens.inc({ model, direction: 'output' }, summary.usage.outputTokens);
        countUsage(model, summary.usage, 'summary');
      }
      break;
    }
    case 'appendMessage': {
      const { key, message } = input as AppendMessageInput;
      if (!key.startsWith(KEY_PREFIX.notice) || message.role !== 'user') break;
      const stage = compactionStageOf(userTextOf(message));
      if (stage) compactions.inc({ stage });
      break;
    }
  }
}

/** Counts a workspace tool run whose activity threw (retried or given up). */
function recordActivityFailure(activityType: string, input: unknown): void {
  if (activityType === 'runTool') toolRuns.inc({ tool: (input as RunToolInput).toolName, outcome: 'failed' });
}

/** The activity interceptor of goal workers: counts each activity as it completes. */
export const activityMetricsInterceptor: ActivityInterceptorsFactory = (context: ActivityContext) => ({
  inbound: {
    async execute(input, next) {
      const activityType = context.info.activityType;
      let result: unknown;
      try {
        result = await next(input);
      } catch (err) {
        recordActivityFailure(activityType, input.args[0]);
        throw err;
      }
      try {
        recordActivity(activityType, input.args[0], result);
      } catch {
        // A metric must never fail the work it counts.
      }
      return result;
    },
  },
});
