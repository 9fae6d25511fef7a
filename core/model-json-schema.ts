/**
 * The JSON Schema a model is shown for a tool's zod schema of arguments. Every tool's spec goes
 * through here, so they all look alike to the model.
 */
import { z } from 'zod';

/**
 * The schema of what the model sends (zod's input side, so transforms and tolerant preprocessing
 * do not show), without `$schema`: noise to the model, and some providers reject unknown top-level
 * keywords. Objects are closed (`additionalProperties: false`), as strict-schema providers require,
 * even where the parser tolerates and ignores extra fields.
 */
export function modelJsonSchema(schema: z.ZodType): Record<string, unknown> {
  const generated = z.toJSONSchema(schema, {
    io: 'input',
    override: ({ zodSchema, jsonSchema }) => {
      if (zodSchema._zod.def.type === 'object') jsonSchema.additionalProperties = false;
    },
  }) as Record<string, unknown>;
  const { $schema: _dialect, ...jsonSchema } = generated;
  return jsonSchema;
}
