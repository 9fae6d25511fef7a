/**
 * Vitest globalSetup: one Temporal dev server for the whole test run (starting one takes a second or
 * two, so per-file servers add up). Wire it in vitest.config.ts with
 * `test: { globalSetup: ['./test/support/global-setup.ts'] }`.
 *
 * How tests use it:
 *
 *   import { inject } from 'vitest';
 *   import { TestWorkflowEnvironment } from '@temporalio/testing';
 *   const env = await TestWorkflowEnvironment.createFromExistingServer({
 *     address: inject('temporalAddress'),
 *     namespace: inject('temporalNamespace'),
 *   });
 *
 * Subprocess tests (e2e CLI) can pass `process.env.GOALRUN_TEST_TEMPORAL_ADDRESS` on as TEMPORAL_ADDRESS.
 * The shared server uses the default dynamic config; a test that needs other settings (e.g. an early
 * continue-as-new suggestion) starts its own with
 * `startTestTemporalServer({ dynamicConfig: { 'limit.historyCount.suggestContinueAsNew': 40 } })`.
 * Setting GOALRUN_TEST_TEMPORAL_ADDRESS (and GOALRUN_TEST_TEMPORAL_HTTP_ADDRESS, its HTTP API) before
 * running vitest reuses that server instead of starting one.
 */
import type { TestProject } from 'vitest/node';
import {
  startTestTemporalServer,
  TEST_TEMPORAL_ADDRESS_ENV,
  TEST_TEMPORAL_HTTP_ADDRESS_ENV,
} from './temporal-server';

declare module 'vitest' {
  export interface ProvidedContext {
    temporalAddress: string;
    /** The server's HTTP API, `host:port`; '' when a reused server's is not known. */
    temporalHttpAddress: string;
    temporalNamespace: string;
  }
}

/** Starts the shared server (unless one is given), provides its address, and returns the teardown. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const existing = process.env[TEST_TEMPORAL_ADDRESS_ENV];
  if (existing) {
    project.provide('temporalAddress', existing);
    project.provide('temporalHttpAddress', process.env[TEST_TEMPORAL_HTTP_ADDRESS_ENV] ?? '');
    project.provide('temporalNamespace', 'default');
    return async () => {};
  }
  const server = await startTestTemporalServer();
  project.provide('temporalAddress', server.address);
  project.provide('temporalHttpAddress', server.httpAddress);
  project.provide('temporalNamespace', server.namespace);
  process.env[TEST_TEMPORAL_ADDRESS_ENV] = server.address;
  process.env[TEST_TEMPORAL_HTTP_ADDRESS_ENV] = server.httpAddress;
  return async () => {
    delete process.env[TEST_TEMPORAL_ADDRESS_ENV];
    delete process.env[TEST_TEMPORAL_HTTP_ADDRESS_ENV];
    await server.stop();
  };
}
