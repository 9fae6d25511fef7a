/**
 * The model clients of a worker's model-step activity: one per model and base URL, made on first use
 * and kept. A client that cannot be made (a missing key, an unknown provider) fails the step for good.
 */
import { ApplicationFailure } from '@temporalio/common';
import { ConfigError, FailureType } from '../core/errors';
import { createModelClient } from './providers';
import type { ModelClient } from './providers/types';
import type { ActivityDeps } from './workflow-activities';

/** Returns the client for a model spec and base URL, made once per pair. */
export function modelClientCache(
  deps: Pick<ActivityDeps, 'env' | 'modelClient'>,
): (spec: string, baseUrl: string | undefined, apiKeyEnv?: string) => ModelClient {
  const clients = new Map<string, ModelClient>();
  return (spec, baseUrl, apiKeyEnv) => {
    const cacheKey = `${spec}|${baseUrl ?? ''}|${apiKeyEnv ?? ''}`;
    let client = clients.get(cacheKey);
    if (!client) {
      try {
        client = deps.modelClient
          ? deps.modelClient(spec, baseUrl)
          : createModelClient(spec, { baseUrl, apiKeyEnv, env: deps.env });
      } catch (err) {
        if (err instanceof ConfigError) {
          throw ApplicationFailure.create({
            message: err.message,
            type: FailureType.ConfigError,
            nonRetryable: true,
          });
        }
        throw err;
      }
      clients.set(cacheKey, client);
    }
    return client;
  };
}
