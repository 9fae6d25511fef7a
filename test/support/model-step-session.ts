/** A stored session with its first message, and a model-step input for it: what the model step's activity tests start from. */
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import type { ModelStepInput } from '../../activities/types';
import { userText } from '../../core/messages';
import type { SessionStore } from '../../store/types';

/** The model every such session names; the tests' OpenAI-compatible server answers for it. */
const TEST_MODEL = 'openai-compatible:test-model';

/**
 * Creates a session `prefix-<uuid>` whose objective is also its first message, and returns step 1's
 * input for it, with `extra` on top (a base URL, a failover rule, ...).
 */
export async function modelStepSession(
  store: SessionStore,
  prefix: string,
  objective: string,
  extra: Partial<ModelStepInput> = {},
): Promise<ModelStepInput> {
  const sessionId = `${prefix}-${randomUUID()}`;
  await store.createSession({
    id: sessionId,
    projectDir: os.tmpdir(),
    projectHash: 'h',
    objective,
    model: TEST_MODEL,
    workflowId: `wf-${sessionId}`,
  });
  const { seq } = await store.appendMessage(sessionId, 'first', userText(objective));
  return { sessionId, stepNumber: 1, execution: 1, model: TEST_MODEL, upToSeq: seq, tools: [], ...extra };
}
