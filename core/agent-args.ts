/**
 * The `agent` tool's arguments (issue 27 §2, sub-agents): one zod schema is what the model is shown
 * and what its call is checked against at the model-step boundary. The workflow imports only types.
 */
import { z } from 'zod';
import { modelJsonSchema } from './model-json-schema';
import { TOOL } from './tool-names';

/** Longest objective a child goal takes (it travels in workflow payloads). */
export const AGENT_PROMPT_MAX_CHARS = 16_000;

const AGENT_DESCRIPTION = [
  'Start a sub-agent: a child goal with its own objective, its own context (it sees nothing of this conversation, so say everything it needs in prompt) and a share of your budget.',
  'Several agent calls in one step run at the same time (at most 3 at once). The call returns when the child ends: its status (completed, blocked, budget_exhausted, failed, cancelled), its summary, its cost and where its full transcript is.',
  'A child shares your task list: it may claim a task (set it in_progress with todo-write merge) and mark it completed. Name the tasks it should take in prompt.',
  'max_steps, max_cost_usd and max_tokens set its share (never more than you have left; under a cap, a third of what is left by default); a child that reaches its share hands back what it has and ends budget_exhausted.',
  'isolation "worktree" runs it on a git worktree of the workspace instead of the workspace itself.',
].join(' ');

/** The arguments of `agent`, as the model is shown them and as its calls are checked. */
export const agentSchema = z.object(
  {
    prompt: z
      .string({ error: () => 'expected a non-empty string' })
      .refine((text) => text.trim() !== '', { error: () => 'expected a non-empty string' })
      .refine((text) => text.length <= AGENT_PROMPT_MAX_CHARS, {
        error: () => `at most ${AGENT_PROMPT_MAX_CHARS} characters`,
      })
      .describe(
        "The child's objective: everything it needs to know, since it sees none of this conversation.",
      ),
    max_steps: z.number().int().positive().nullish().describe('Most model steps the child may take.'),
    max_cost_usd: z.number().positive().nullish().describe('Most US dollars the child may spend.'),
    max_tokens: z.number().int().positive().nullish().describe('Most tokens the child may use.'),
    isolation: z
      .enum(['none', 'worktree'])
      .nullish()
      .describe('"none" (default): the same workspace; "worktree": a git worktree of it.'),
  },
  { error: () => 'expected an object with prompt' },
);

/** Valid arguments of `agent`. */
export interface AgentArgs {
  prompt: string;
  maxSteps?: number;
  maxCostUsd?: number;
  maxTokens?: number;
  isolation: 'none' | 'worktree';
}

/** The outcome of checking an agent call: its arguments, or an error text the model can act on. */
export type ParsedAgent = { ok: true; args: AgentArgs } | { ok: false; error: string };

/** Prefix of every error text about an agent call. */
export const AGENT_ERROR_PREFIX = `invalid arguments for ${TOOL.agent}`;

/** What the model is shown about `agent`. */
export function agentToolSpec(): { name: string; description: string; inputSchema: Record<string, unknown> } {
  return { name: TOOL.agent, description: AGENT_DESCRIPTION, inputSchema: modelJsonSchema(agentSchema) };
}

/** Checks the model's arguments to `agent` (an object, or its JSON text); `objective` is taken for `prompt`. */
export function parseAgentArgs(input: unknown): ParsedAgent {
  let value = input;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch (err) {
      return { ok: false, error: `${AGENT_ERROR_PREFIX}: not valid JSON (${(err as Error).message})` };
    }
  }
  if (value && typeof value === 'object' && !('prompt' in value) && 'objective' in value) {
    value = { ...(value as Record<string, unknown>), prompt: (value as Record<string, unknown>).objective };
  }
  const result = agentSchema.safeParse(value);
  if (!result.success) {
    const problems = result.error.issues.map((issue) =>
      issue.path.length === 0 ? issue.message : `${issue.path.join('.')}: ${issue.message}`,
    );
    return { ok: false, error: `${AGENT_ERROR_PREFIX}: ${problems.join('; ')}` };
  }
  const data = result.data;
  return {
    ok: true,
    args: {
      prompt: data.prompt,
      ...(data.max_steps != null ? { maxSteps: data.max_steps } : {}),
      ...(data.max_cost_usd != null ? { maxCostUsd: data.max_cost_usd } : {}),
      ...(data.max_tokens != null ? { maxTokens: data.max_tokens } : {}),
      isolation: data.isolation ?? 'none',
    },
  };
}
