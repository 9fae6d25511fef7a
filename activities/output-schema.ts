/**
 * `--output-schema`: the goal's final result must match a JSON Schema. The model step checks the
 * `result` of a `finish` call against it (ajv) and turns a mismatch into the call's error, which the
 * model reads and can fix; a matching result travels to the workflow with the call's arguments.
 */
import Ajv, { type ValidateFunction } from 'ajv';
import { FINISH_ERROR_PREFIX, type ParsedFinish } from '../core/finish';

const ajv = new Ajv({ allErrors: true, strict: false });
/** Compiled schemas by their JSON: a goal's schema is compiled once per process. */
const compiled = new Map<string, ValidateFunction>();
/** Problems listed in one error, so the message stays readable (and small). */
const MAX_LISTED_PROBLEMS = 8;

function validatorOf(schema: Record<string, unknown>): ValidateFunction {
  const key = JSON.stringify(schema);
  let validate = compiled.get(key);
  if (!validate) {
    validate = ajv.compile(schema);
    compiled.set(key, validate);
  }
  return validate;
}

/** Why a schema cannot be used (for the CLI, before the goal starts), or null when it compiles. */
export function outputSchemaProblem(schema: unknown): string | null {
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) return 'it is not a JSON object';
  try {
    validatorOf(schema as Record<string, unknown>);
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

/** A parsed `finish` call checked against the goal's output schema (calls with status blocked need no result). */
export function checkFinishResult(
  parsed: ParsedFinish,
  rawInput: unknown,
  schema: Record<string, unknown>,
): ParsedFinish {
  if (!parsed.ok || parsed.args.status !== 'complete') return parsed;
  const raw = typeof rawInput === 'string' ? safeJson(rawInput) : rawInput;
  const result = raw && typeof raw === 'object' ? (raw as Record<string, unknown>).result : undefined;
  if (result === undefined) {
    return {
      ok: false,
      error: `${FINISH_ERROR_PREFIX}: result is required: this goal's final result must match its output schema`,
    };
  }
  const validate = validatorOf(schema);
  if (validate(result)) return { ok: true, args: { ...parsed.args, result } };
  const problems = (validate.errors ?? [])
    .slice(0, MAX_LISTED_PROBLEMS)
    .map((error) => `result${error.instancePath.replaceAll('/', '.')} ${error.message ?? 'is invalid'}`);
  return {
    ok: false,
    error: `${FINISH_ERROR_PREFIX}: result does not match the output schema: ${problems.join('; ')}`,
  };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
