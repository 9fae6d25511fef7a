/** The `finish` tool: the model's way to end a goal. Handled in the workflow, so it is plain code. */
import { TOOL } from './tool-names';

/** What the model is shown about `finish`. */
export const FINISH_TOOL_SPEC = {
  name: TOOL.finish,
  description:
    'End the goal. Call it once the objective is fully done and verified (status "complete"), or when you cannot make further progress without help (status "blocked", explaining what is missing). The summary is shown to the user: say what you did and how you checked it.',
  inputSchema: {
    type: 'object',
    properties: {
      status: { type: 'string', enum: ['complete', 'blocked'], description: 'complete or blocked' },
      summary: {
        type: 'string',
        description: 'What was done and how it was verified, or why you are blocked.',
      },
    },
    required: ['status', 'summary'],
    additionalProperties: false,
  },
} as const;

/** Valid arguments of `finish`. */
export interface FinishArgs {
  status: 'complete' | 'blocked';
  summary: string;
}

/** Validates the model's arguments to `finish`, with an error text the model can act on. */
export function parseFinishArgs(
  input: unknown,
): { ok: true; args: FinishArgs } | { ok: false; error: string } {
  let value = input;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch (err) {
      return { ok: false, error: `invalid arguments for finish: not valid JSON (${(err as Error).message})` };
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, error: 'invalid arguments for finish: expected an object with status and summary' };
  }
  const record = value as Record<string, unknown>;
  const problems: string[] = [];
  if (record.status !== 'complete' && record.status !== 'blocked') {
    problems.push(`status: expected "complete" or "blocked", received ${JSON.stringify(record.status)}`);
  }
  if (typeof record.summary !== 'string' || record.summary.trim() === '') {
    problems.push('summary: expected a non-empty string');
  }
  if (problems.length > 0)
    return { ok: false, error: `invalid arguments for finish: ${problems.join('; ')}` };
  return {
    ok: true,
    args: { status: record.status as FinishArgs['status'], summary: record.summary as string },
  };
}
