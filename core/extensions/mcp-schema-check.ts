/**
 * Checks an MCP tool's input schema before it is offered to a model. Providers reject a whole
 * request when one tool's schema is not what they take (an object schema at the top, a sane size),
 * so a bad tool is left out with a reason instead of failing every step of the goal.
 */
import { clip } from '../text';

/** A schema larger than this (as JSON) is left out: it would crowd the context of every request. */
export const MCP_SCHEMA_MAX_BYTES = 16 * 1024;
/** Tool descriptions are clipped to this many characters (providers cap them). */
export const MCP_DESCRIPTION_MAX_CHARS = 1_024;

/** The verdict on one tool's schema. */
export type SchemaVerdict = { ok: true; schema: Record<string, unknown> } | { ok: false; problem: string };

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * The schema as the model is shown it, or why it cannot be. An object schema without `properties`
 * gets an empty one (some providers insist); anything that is not `type: "object"` at the top is refused.
 */
export function checkToolSchema(schema: unknown): SchemaVerdict {
  if (!isPlainObject(schema)) return { ok: false, problem: 'its input schema is not a JSON object' };
  if (schema.type !== 'object') {
    return { ok: false, problem: `its input schema's type is ${JSON.stringify(schema.type)}, not "object"` };
  }
  if (schema.properties !== undefined && !isPlainObject(schema.properties)) {
    return { ok: false, problem: 'its input schema\'s "properties" is not an object' };
  }
  if (
    schema.required !== undefined &&
    !(Array.isArray(schema.required) && schema.required.every((item) => typeof item === 'string'))
  ) {
    return { ok: false, problem: 'its input schema\'s "required" is not a list of names' };
  }
  let text: string;
  try {
    text = JSON.stringify(schema);
  } catch {
    return { ok: false, problem: 'its input schema cannot be written as JSON' };
  }
  const bytes = new TextEncoder().encode(text).length;
  if (bytes > MCP_SCHEMA_MAX_BYTES) {
    return { ok: false, problem: `its input schema is ${bytes} bytes (at most ${MCP_SCHEMA_MAX_BYTES})` };
  }
  return { ok: true, schema: schema.properties === undefined ? { ...schema, properties: {} } : schema };
}

/** A description clipped for a provider. */
export function clipDescription(text: string | undefined): string {
  return clip((text ?? '').trim(), MCP_DESCRIPTION_MAX_CHARS);
}
