/** The steps CLI tests repeat: start a goal against the OpenAI test server, read its status, hold answers. */
import type { Client } from '@temporalio/client';
import { workflowIdOf } from '../../core/workflow-names';
import { expectJson, runCli, waitFor } from './cli';
import type { GoalTestEnv } from './goal-env';
import {
  type ChatRequestBody,
  type OpenAITestServer,
  promptText,
  startOpenAITestServer,
} from './openai-test-server';

/** The model the tests name: any `openai-compatible:` model is served by the test server at --base-url. */
export const TEST_MODEL = 'openai-compatible:test-model';

/** What `start --json` prints; the rest of its fields as the CLI gives them. */
export type StartedGoal = Record<string, any> & { sessionId: string; workflowId: string };

/**
 * `VERB OBJECTIVE --workspace W --model M --base-url URL ...extra`: a goal in the test's workspace whose
 * model calls go to the test server. Add `--json` and any other flag in `extra`.
 */
export function goalArgs(
  verb: 'start' | 'run',
  objective: string,
  t: { workspace: string },
  server: { url: string },
  extra: string[] = [],
  model = TEST_MODEL,
): string[] {
  return [verb, objective, '--workspace', t.workspace, '--model', model, '--base-url', server.url, ...extra];
}

/** Starts a goal with `start --json` (no worker needed), asserts that it exited 0, and returns its answer. */
export async function startGoal(
  t: Pick<GoalTestEnv, 'env' | 'workspace'>,
  server: { url: string },
  objective: string,
  extra: string[] = [],
  model = TEST_MODEL,
): Promise<StartedGoal> {
  return expectJson(
    await runCli(goalArgs('start', objective, t, server, [...extra, '--json'], model), t.env),
  ) as StartedGoal;
}

/** `status ID --json`, asserted to exit 0. */
export async function statusOf(
  t: { env: NodeJS.ProcessEnv },
  sessionId: string,
): Promise<Record<string, any>> {
  return expectJson(await runCli(['status', sessionId, '--json'], t.env));
}

/** Waits until `status` counts at least `steps` steps of the goal (waitFor's timeout and interval by default). */
export function waitForSteps(
  t: { env: NodeJS.ProcessEnv },
  sessionId: string,
  steps: number,
  timeoutMs?: number,
  intervalMs?: number,
): Promise<boolean> {
  return waitFor(
    `${sessionId} to reach ${steps} steps`,
    async () => ((await statusOf(t, sessionId)).steps as number) >= steps,
    timeoutMs,
    intervalMs,
  );
}

/** The requests the test server got for one goal (its objective is in every prompt of it). */
export function requestsOf(server: OpenAITestServer, objective: string) {
  return server.requests.filter((request) => promptText(request.body).includes(objective));
}

/** A promise the test opens when it is ready: holds a model answer back. */
export function gate(): { opened: Promise<void>; open: () => void } {
  let open = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

/** A test server that finishes every goal, holding back the answers `holds` picks while held. */
export interface HoldingFinishServer {
  server: OpenAITestServer;
  /** From now on, answers that `holds` picks wait for `release`. */
  hold(): void;
  /** Lets the held answers go (and any later ones). */
  release(): void;
}

/**
 * Starts a test server that answers every request with `finish` (complete, "done"); while held, the
 * requests `holds` picks (all by default) wait until released, so their goals stay running.
 */
export async function startHoldingFinishServer(
  holds: (body: ChatRequestBody) => boolean = () => true,
): Promise<HoldingFinishServer> {
  let held: Promise<void> = Promise.resolve();
  let release: () => void = () => {};
  const server = await startOpenAITestServer({
    fallback: async (body) => {
      if (holds(body)) await held;
      return { toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'done' } }] };
    },
  });
  return {
    server,
    hold: () => {
      held = new Promise((resolve) => {
        release = resolve;
      });
    },
    release: () => release(),
  };
}

/** Waits until Temporal has deleted a cleaned session's execution (it does so after the call returns). */
export function waitForExecutionDeleted(temporal: Client, sessionId: string): Promise<boolean> {
  return waitFor(`the execution of ${sessionId} deleted from Temporal`, () =>
    temporal.workflow
      .getHandle(workflowIdOf(sessionId))
      .describe()
      .then(
        () => false,
        (err: Error) => /not found/i.test(err.message),
      ),
  );
}
