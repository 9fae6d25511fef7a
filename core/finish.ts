/**
 * The `finish` tool, the model's way to end a goal: one zod schema is both what the model is shown
 * and what its call is validated against, at the model-step boundary. The workflow, which ends the
 * goal, imports only the types from here (zod schemas would be instantiated per cached workflow).
 */
import { z } from 'zod';
import { modelJsonSchema } from './model-json-schema';
import { TOOL } from './tool-names';

const FINISH_DESCRIPTION =
  'End the goal. Call it once the objective is fully done and verified (status "complete"), or when you cannot make further progress without help (status "blocked", explaining what is missing). The summary is shown to the user: say what you did and how you checked it.';

/** Prefix of every error text about a finish call. */
export const FINISH_ERROR_PREFIX = `invalid arguments for ${TOOL.finish}`;
const NON_EMPTY_SUMMARY = 'expected a non-empty string';
/** Most parts a finish may name. */
export const OBJECTIVE_PARTS_MAX = 20;

/** The arguments of finish, as the model is shown them and as its calls are validated. */
export const finishSchema = z.object(
  {
    status: z
      .enum(['complete', 'blocked'], {
        error: (issue) => `expected "complete" or "blocked", received ${JSON.stringify(issue.input)}`,
      })
      .describe('complete or blocked'),
    // Kept as written (not trimmed): it is shown to the user.
    summary: z
      .string({ error: () => NON_EMPTY_SUMMARY })
      .refine((text) => text.trim() !== '', { error: () => NON_EMPTY_SUMMARY })
      .describe('What was done and how it was verified, or why you are blocked.'),
    // Issue 27 §1: the claim names the objective's parts, so a summary cannot quietly narrow it.
    objective_parts: z
      .array(
        z
          .string({ error: () => 'expected a string' })
          .trim()
          .min(1, NON_EMPTY_SUMMARY),
        {
          error: () => 'expected a list of strings',
        },
      )
      .max(OBJECTIVE_PARTS_MAX, `at most ${OBJECTIVE_PARTS_MAX} parts`)
      .optional()
      .describe(
        'Every part of the objective as the user wrote it (as you understood it at the start), each one you claim done. Never fewer parts than the objective has.',
      ),
  },
  { error: () => 'expected an object with status and summary' },
);

/** Valid arguments of `finish`; `result` only for a goal with an output schema, already checked against it. */
export type FinishArgs = z.output<typeof finishSchema> & { result?: unknown };

/** The outcome of validating a finish call: its arguments, or an error text the model can act on. */
export type ParsedFinish = { ok: true; args: FinishArgs } | { ok: false; error: string };

/** What the model is shown about `finish`. */
export function finishToolSpec(): {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
} {
  return { name: TOOL.finish, description: FINISH_DESCRIPTION, inputSchema: modelJsonSchema(finishSchema) };
}

/**
 * The `finish` spec of a goal with an output schema: a `result` matching the schema is required
 * (the model reads the schema where it reads the other arguments).
 */
export function finishSpecWithResult(
  spec: { name: string; description: string; inputSchema: Record<string, unknown> },
  outputSchema: Record<string, unknown>,
): { name: string; description: string; inputSchema: Record<string, unknown> } {
  const properties = (spec.inputSchema.properties ?? {}) as Record<string, unknown>;
  const required = (spec.inputSchema.required ?? []) as string[];
  return {
    ...spec,
    description: `${spec.description} With status "complete", give the final result in \`result\`: it must match the JSON Schema shown there.`,
    inputSchema: {
      ...spec.inputSchema,
      properties: { ...properties, result: outputSchema },
      required: [...required, 'result'],
    },
  };
}

/** `field: problem`, or the problem alone for the arguments as a whole. */
function describeIssue(issue: z.core.$ZodIssue): string {
  return issue.path.length === 0 ? issue.message : `${issue.path.join('.')}: ${issue.message}`;
}

/** Validates the model's arguments to `finish` (an object, or its JSON text); unknown fields are dropped. */
export function parseFinishArgs(input: unknown): ParsedFinish {
  let value = input;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch (err) {
      return { ok: false, error: `${FINISH_ERROR_PREFIX}: not valid JSON (${(err as Error).message})` };
    }
  }
  const result = finishSchema.safeParse(value);
  if (result.success) return { ok: true, args: result.data };
  return { ok: false, error: `${FINISH_ERROR_PREFIX}: ${result.error.issues.map(describeIssue).join('; ')}` };
}

/**
 * The `finish` spec of a goal with checks (issue 27 §1): `objective_parts` is required, so every
 * claim names the parts of the objective it covers. Goals without checks keep it optional.
 */
export function finishSpecWithParts(spec: {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}): { name: string; description: string; inputSchema: Record<string, unknown> } {
  const required = (spec.inputSchema.required ?? []) as string[];
  return {
    ...spec,
    description: `${spec.description} Name every part of the objective in \`objective_parts\`: the goal's checks run before it is completed.`,
    inputSchema: { ...spec.inputSchema, required: [...required, 'objective_parts'] },
  };
}

/** The error of a finish complete that names no parts, in a goal that requires them. */
export function missingPartsError(parsed: ParsedFinish): ParsedFinish {
  if (!parsed.ok || parsed.args.status !== 'complete' || (parsed.args.objective_parts?.length ?? 0) > 0)
    return parsed;
  return {
    ok: false,
    error: `${FINISH_ERROR_PREFIX}: objective_parts: required (name every part of the objective you claim done)`,
  };
}
