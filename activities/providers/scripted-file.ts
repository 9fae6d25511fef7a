import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { ConfigError } from '../../core/errors';

/** How many schema problems one error message lists before it says "and N more". */
const MAX_LISTED_ISSUES = 3;

const scriptedToolCallSchema = z
  .strictObject({
    name: z.string().min(1, 'the tool name is empty'),
    args: z.record(z.string(), z.unknown(), 'args must be a JSON object').optional(),
    /** Sent to goalrun as-is, as if the model had streamed it: for malformed-argument tests. */
    argsRaw: z.string().optional(),
  })
  .refine((call) => call.args === undefined || call.argsRaw === undefined, {
    message: 'give either args or argsRaw, not both',
  });

const scriptedTurnSchema = z.strictObject({
  text: z.string().optional(),
  toolCalls: z.array(scriptedToolCallSchema).optional(),
  usage: z
    .strictObject({
      input: z.number().int().nonnegative(),
      output: z.number().int().nonnegative(),
      cacheRead: z.number().int().nonnegative().optional(),
      cacheWrite: z.number().int().nonnegative().optional(),
    })
    .optional(),
  delayMs: z.number().int().nonnegative().optional(),
});

/** A scripted answer to a summarizer call: a summary text, or a failure of the summarizer. */
const scriptedSummarySchema = z.union([
  z.strictObject({ text: z.string(), usage: scriptedTurnSchema.shape.usage }),
  z.strictObject({ fail: z.string().min(1, 'the failure message is empty') }),
]);

/**
 * The JSON file a `scripted:<file>` model replays: turn N answers step N; summary K answers the
 * K-th summarizer call (a built-in summary when there is none).
 */
export const scriptFileSchema = z.strictObject({
  turns: z.array(scriptedTurnSchema),
  summaries: z.array(scriptedSummarySchema).optional(),
});

/** One scripted summarizer answer. */
export type ScriptedSummary = z.infer<typeof scriptedSummarySchema>;

/** A parsed script file. */
export type ScriptFile = z.infer<typeof scriptFileSchema>;

/** One scripted model turn. */
export type ScriptedTurn = z.infer<typeof scriptedTurnSchema>;

/** Reads and validates a script file; throws ConfigError naming the file and the problem. */
export async function loadScriptFile(file: string): Promise<ScriptFile> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw readError(file, err);
  }
  return parseScriptFile(file, text);
}

/** Synchronous loadScriptFile, for the CLI's pre-flight check. */
export function loadScriptFileSync(file: string): ScriptFile {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw readError(file, err);
  }
  return parseScriptFile(file, text);
}

/** Validates the text of a script file; throws ConfigError naming the file and the problem. */
export function parseScriptFile(file: string, text: string): ScriptFile {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(`scripted model file ${file} is not valid JSON: ${(err as Error).message}`);
  }
  const result = scriptFileSchema.safeParse(json);
  if (!result.success) {
    const issues = result.error.issues.map((issue) => `${formatPath(issue.path)}: ${issue.message}`);
    const listed = issues.slice(0, MAX_LISTED_ISSUES).join('; ');
    const more = issues.length > MAX_LISTED_ISSUES ? ` (and ${issues.length - MAX_LISTED_ISSUES} more)` : '';
    throw new ConfigError(`scripted model file ${file} is invalid: ${listed}${more}`);
  }
  return result.data;
}

function readError(file: string, err: unknown): ConfigError {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return new ConfigError(`scripted model file ${file} does not exist`);
  if (code === 'EISDIR') return new ConfigError(`scripted model file ${file} is a directory`);
  return new ConfigError(`scripted model file ${file} cannot be read: ${(err as Error).message}`);
}

/** Renders a zod issue path the way a reader would write it: `turns[0].toolCalls[1].name`. */
function formatPath(issuePath: ReadonlyArray<PropertyKey>): string {
  if (issuePath.length === 0) return '(top level)';
  return issuePath
    .map((key, i) => (typeof key === 'number' ? `[${key}]` : `${i === 0 ? '' : '.'}${String(key)}`))
    .join('');
}
