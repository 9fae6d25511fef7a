/**
 * `--output-schema`: the goal's final result must match a JSON Schema. The model step checks the
 * `result` of a `finish` call against it (ajv) and turns a mismatch into the call's error, which the
 * model reads and can fix; a matching result travels to the workflow with the call's arguments.
 */
import type Ajv from 'ajv';
import type { Options, ValidateFunction } from 'ajv';
import { FINISH_ERROR_PREFIX, type ParsedFinish } from '../core/finish';

/**
 * How every schema is compiled: all problems reported; unknown keywords and formats allowed and
 * never logged (zod writes `format: "cuid"` beside a `pattern` that checks it); the formats ajv-formats
 * knows (`date-time`, `email`, `uri`, `uuid`, …) checked.
 */
const AJV_OPTIONS: Options = { allErrors: true, strict: false, logger: false };

/** The JSON Schema drafts accepted, by the `$schema` that declares them (without `#`, http or https). */
const DRAFTS = {
  'json-schema.org/draft-06/schema': 'draft-06',
  'json-schema.org/draft-07/schema': 'draft-07',
  'json-schema.org/draft/2019-09/schema': '2019-09',
  'json-schema.org/draft/2020-12/schema': '2020-12',
} as const;

/** A draft that goalrun checks schemas of. */
type Draft = (typeof DRAFTS)[keyof typeof DRAFTS];

/** Thrown for a `$schema` of a draft ajv does not implement. */
class UnsupportedDraft extends Error {}

/** The draft a schema declares with `$schema`; draft-07 (ajv's default) when it declares none. */
function draftOf(schema: Record<string, unknown>): Draft {
  const declared = schema.$schema;
  if (declared === undefined) return 'draft-07';
  const key = typeof declared === 'string' ? declared.replace(/^https?:\/\//, '').replace(/#$/, '') : '';
  const draft = DRAFTS[key as keyof typeof DRAFTS];
  if (!draft)
    throw new UnsupportedDraft(
      `$schema ${JSON.stringify(declared)} is not a supported draft (supported: draft-06, draft-07, 2019-09 and 2020-12, e.g. "https://json-schema.org/draft/2020-12/schema")`,
    );
  return draft;
}

/** One ajv per draft, made on first use. */
const validators = new Map<Draft, Ajv>();

function ajvFor(draft: Draft): Ajv {
  let ajv = validators.get(draft);
  if (!ajv) {
    // Loaded on a goal's first schema, not at worker start: ajv and its formats cost every worker
    // about 80 ms of CPU to load, and most goals have no output schema.
    const { default: AjvDraft07 } = require('ajv') as typeof import('ajv');
    const { default: Ajv2019 } = require('ajv/dist/2019') as typeof import('ajv/dist/2019');
    const { default: Ajv2020 } = require('ajv/dist/2020') as typeof import('ajv/dist/2020');
    const { default: addFormats } = require('ajv-formats') as typeof import('ajv-formats');
    ajv =
      draft === '2020-12'
        ? new Ajv2020(AJV_OPTIONS)
        : draft === '2019-09'
          ? new Ajv2019(AJV_OPTIONS)
          : new AjvDraft07(AJV_OPTIONS);
    if (draft === 'draft-06') ajv.addMetaSchema(require('ajv/dist/refs/json-schema-draft-06.json'));
    addFormats(ajv);
    validators.set(draft, ajv);
  }
  return ajv;
}

/** Compiled schemas by their JSON: a goal's schema is compiled once per process. */
const compiled = new Map<string, ValidateFunction>();
/** Problems listed in one error, so the message stays readable (and small). */
const MAX_LISTED_PROBLEMS = 8;

function validatorOf(schema: Record<string, unknown>): ValidateFunction {
  const key = JSON.stringify(schema);
  let validate = compiled.get(key);
  if (!validate) {
    validate = ajvFor(draftOf(schema)).compile(schema);
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
