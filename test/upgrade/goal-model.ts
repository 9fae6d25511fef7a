/**
 * One OpenAI-compatible test model for every goal of the upgrade test: each goal's objective carries
 * a tag (`[upgrade-<name>]`), and the goal's own script answers its requests. A script may hold a
 * request (the model call stays in flight) until the test lets it go, which is how a goal is kept at
 * a chosen point while its workers are killed.
 */
import { summarizeLikeAModel } from '../support/compaction-model';
import {
  type ChatRequestBody,
  type OpenAITestServer,
  requestStep,
  startOpenAITestServer,
  type TestResponse,
} from '../support/openai-test-server';

/** What a goal's script is told about one request. */
export interface GoalRequest {
  /** 1-based count of this goal's main (tool-calling) requests, retries included. */
  call: number;
  /** The step as the prompt says it (assistant messages so far + 1). */
  step: number;
  /** A summarizer request (no tools). */
  summary: boolean;
  body: ChatRequestBody;
}

/** A goal's script: a response, or a promise of one (a held call). */
export type GoalScript = (request: GoalRequest) => TestResponse | Promise<TestResponse>;

/** A model call kept in flight until released. */
export interface HeldCall {
  request: GoalRequest;
  release: (response: TestResponse) => void;
}

const TAG = /\[upgrade-([a-z-]+)\]/;

/** The tag of a goal named `name`, to put in its objective. */
export function goalTag(name: string): string {
  return `[upgrade-${name}]`;
}

/** The model server and the scripts of the goals it answers. */
export class UpgradeModel {
  private readonly scripts = new Map<string, GoalScript>();
  private readonly calls = new Map<string, number>();
  /** Every request, by goal (live). */
  readonly seen = new Map<string, GoalRequest[]>();
  /** Calls held now, by goal. */
  readonly held = new Map<string, HeldCall[]>();
  private constructor(readonly server: OpenAITestServer) {}

  static async start(): Promise<UpgradeModel> {
    let model: UpgradeModel | undefined;
    const server = await startOpenAITestServer({ fallback: (body) => (model as UpgradeModel).answer(body) });
    model = new UpgradeModel(server);
    return model;
  }

  /** Sets (or replaces) a goal's script. */
  script(name: string, script: GoalScript): void {
    this.scripts.set(name, script);
  }

  /** Keeps a call in flight until `release` (or releaseAll) answers it. */
  hold(name: string, request: GoalRequest): Promise<TestResponse> {
    return new Promise((resolve) => {
      const list = this.held.get(name) ?? [];
      list.push({ request, release: resolve });
      this.held.set(name, list);
    });
  }

  /** Answers every held call (the workers that made them may be gone) with an error. */
  releaseAll(): void {
    for (const list of this.held.values()) {
      for (const call of list.splice(0))
        call.release({ status: 503, body: { error: { message: 'released' } } });
    }
  }

  /** The requests of a goal seen so far. */
  requestsOf(name: string): GoalRequest[] {
    return this.seen.get(name) ?? [];
  }

  private answer(body: ChatRequestBody): TestResponse | Promise<TestResponse> {
    const text = JSON.stringify(body.messages ?? []);
    const summary = !body.tools || body.tools.length === 0;
    // A summarizer request may not show the objective: only the compaction goal compacts.
    const name = TAG.exec(text)?.[1] ?? (summary ? 'compaction' : undefined);
    const script = name ? this.scripts.get(name) : undefined;
    if (!name || !script) return { status: 400, body: { error: { message: `no script for ${name}` } } };
    const call = summary ? 0 : (this.calls.get(name) ?? 0) + 1;
    if (!summary) this.calls.set(name, call);
    const request: GoalRequest = { call, step: requestStep(body), summary, body };
    const list = this.seen.get(name) ?? [];
    list.push(request);
    this.seen.set(name, list);
    return script(request);
  }

  async close(): Promise<void> {
    this.releaseAll();
    await this.server.close();
  }
}

/** A bash call. */
export function bash(args: Record<string, unknown>): TestResponse {
  return { toolCalls: [{ name: 'bash', args }] };
}

/** The model ends the goal. */
export const FINISH: TestResponse = {
  toolCalls: [{ name: 'finish', args: { status: 'complete', summary: 'finished after the upgrade' } }],
};

/** What a summarizer that keeps the facts answers. */
export function summaryOf(request: GoalRequest): TestResponse {
  return { text: summarizeLikeAModel(JSON.stringify(request.body.messages ?? [])) };
}
