/**
 * The goal workflow's activities, composed from one module per kind of work. Each one is
 * idempotent: its store writes are keyed by step number or tool-call id, so a retry after a crash
 * finds its earlier work instead of redoing it.
 */
import type { SessionStore } from '../store/types';
import { createDailyBudgetActivities } from './daily-budget-activities';
import { createModelStepActivity } from './model-step-activity';
import type { ModelClient, ProviderEnv } from './providers/types';
import { createSessionActivities } from './session-activities';
import { typingStoreOutages } from './store-outage';
import { createToolActivity } from './tool-activity';
import type { JobManager } from './tools/jobs';

/** What the activities need from their process. */
export interface ActivityDeps {
  store: SessionStore;
  /** Provider settings read from the worker's environment (never from workflow input). */
  env: ProviderEnv;
  /** Builds a model client; tests may pass their own. */
  modelClient?: (spec: string, baseUrl: string | undefined) => ModelClient;
  /** Known secret values (provider keys, database password), redacted from every tool output. */
  secrets?: string[];
  /** This worker's tool task queue, recorded with the background jobs it starts. */
  processQueue?: string;
  /** The worker's tool processes; absent means the process-wide JobManager (processJobManager()). */
  jobs?: JobManager;
}

/** Creates the goal workflow's activities over a store and a provider environment. */
export function createGoalActivities(deps: ActivityDeps) {
  return {
    // The workflow's store calls: an outage is typed, so the workflow waits it out (store-wait.ts).
    ...typingStoreOutages(createSessionActivities(deps.store, deps.env)),
    ...typingStoreOutages(createDailyBudgetActivities(deps.store)),
    // Its store reads before the provider call: an outage is typed too, so the workflow takes the step again.
    ...typingStoreOutages(createModelStepActivity(deps)),
    ...createToolActivity({
      store: deps.store,
      secrets: deps.secrets,
      processQueue: deps.processQueue,
      jobs: deps.jobs,
    }),
  };
}

/** The activity interface the workflow proxies. */
export type GoalActivities = ReturnType<typeof createGoalActivities>;
