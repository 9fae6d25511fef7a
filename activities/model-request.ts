/**
 * What a model step sends: the system prompt, the transcript its context plan keeps, the task list,
 * the tools on offer and the images the messages name. Assembled the same way on every step, so the
 * request's prefix is byte-identical from step to step (prompt caching).
 */

import type { WorkspaceContextData } from '../core/extensions/workspace-context';
import { finishSpecWithParts, finishSpecWithResult } from '../core/finish';
import type { GoalDefinition } from '../core/goal';
import { userText } from '../core/messages';
import { storeKeys } from '../core/store-keys';
import { renderTaskList, taskView } from '../core/task-graph';
import type { TaskGraph } from '../core/task-graph-types';
import type { TokenCountCache } from '../core/token-cache';
import { TOOL } from '../core/tool-names';
import type { SessionRow, SessionStore } from '../store/types';
import { buildPlannedContext } from './context-builder';
import { mcpToolSpecs } from './extensions/mcp-model-view';
import { systemPrompt } from './prompt';
import { parseModelSpec } from './providers/model-spec';
import type { ModelRequest } from './providers/types';
import { requestImages } from './request-images';
import { cacheTtlFor, placeTaskList, promptLayoutOf } from './request-layout';
import { toolSpecsFor } from './tool-catalog';
import { recordTraceContent } from './trace-content';
import type { ModelStepInput } from './types';

/** The parts of a step's request that come from the store and the goal. */
export type StepRequest = Pick<
  ModelRequest,
  'system' | 'messages' | 'tail' | 'images' | 'cache' | 'tools'
> & {
  /** Tokens every request carries whatever compaction does: the pressure compaction cannot relieve. */
  fixedTokens: number;
};

/** What the step knows when it builds its request. */
export interface StepRequestFacts {
  input: ModelStepInput;
  execution: number;
  session: SessionRow;
  goal: GoalDefinition | undefined;
  /** The project instructions and MCP tools the tool host gathered for this execution. */
  workspaceContext: WorkspaceContextData | null;
  /** A complete finish must name the objective's parts (a goal with checks or a sign-off). */
  requireParts: boolean;
}

/** Builds a step's request; `fixedTexts` estimates the texts that repeat from step to step once. */
export async function buildStepRequest(
  store: SessionStore,
  fixedTexts: TokenCountCache,
  facts: StepRequestFacts,
): Promise<StepRequest> {
  const { input, execution, session, goal, workspaceContext, requireParts } = facts;
  // Only Anthropic's cache needs breakpoints, and their lifetime depends on the previous step's time.
  const breakpoints = parseModelSpec(input.model).provider === 'anthropic';
  const [planned, previousAnswer] = await Promise.all([
    buildPlannedContext(store, input.sessionId, input.upToSeq, input.plan),
    breakpoints && input.stepNumber > 1
      ? store.getEventByKey(input.sessionId, storeKeys.usageEvent(execution, input.stepNumber - 1))
      : null,
  ]);
  const { messages } = planned;
  const images = await requestImages(store, messages);
  // The task list is rendered per request, so no compaction can drop it; it goes after the
  // transcript, so a todo-write changes no byte of the prefix the provider has cached.
  const savedTasks = (session.goalState as { tasks?: TaskGraph } | null)?.tasks;
  const tasks = (input.state?.set.tasks as TaskGraph | undefined) ?? savedTasks ?? [];
  const taskList = placeTaskList(promptLayoutOf(), tasks.length > 0 ? renderTaskList(taskView(tasks)) : null);
  // Read from one stored row, so the instructions are the same bytes from step to step.
  const system = systemPrompt({
    objective: session.objective,
    workspace: session.projectDir,
    tasks: taskList.inSystem,
    instructions: workspaceContext?.instructions.text || null,
    appended: goal?.appendSystemPrompt ?? null,
  });
  // A goal with an output schema has a finish tool that requires a result matching it.
  const outputSchema = goal?.outputSchema;
  const offered = toolSpecsFor(input.tools).map((spec) => {
    if (spec.name !== TOOL.finish) return spec;
    const withResult = outputSchema ? finishSpecWithResult(spec, outputSchema) : spec;
    return requireParts ? finishSpecWithParts(withResult) : withResult;
  });
  const tools = [...offered, ...mcpToolSpecs(workspaceContext)];
  // On the step's `chat` span, with --trace-content only (worker/genai-spans.ts).
  recordTraceContent(() => ({
    'gen_ai.system_instructions': system,
    'gen_ai.input.messages': JSON.stringify(
      taskList.tail ? [...messages, userText(taskList.tail)] : messages,
    ),
  }));
  return {
    system,
    messages,
    tail: taskList.tail,
    ...(images ? { images } : {}),
    cache: breakpoints
      ? { headCount: planned.headCount, ttl: cacheTtlFor(previousAnswer?.createdAt, Date.now()) }
      : undefined,
    tools,
    fixedTokens: fixedTexts.sum(system, taskList.tail ?? '', JSON.stringify(tools)),
  };
}
