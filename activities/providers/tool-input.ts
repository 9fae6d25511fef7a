/**
 * Tool-call arguments cross two boundaries: the model streams them as a JSON string, and goalrun
 * sends stored calls back to the model in later prompts. These two functions are the only places
 * that translate between the forms, so the real and the scripted providers behave alike.
 */

/**
 * The `input` goalrun stores for a tool call the model streamed: the parsed JSON value, or the raw
 * string when it does not parse. Never throws: malformed arguments are the tool layer's to report
 * back to the model, which can then correct itself; failing the step would only repeat the call.
 */
export function parseToolCallInput(raw: string): unknown {
  // Some providers send an empty string for a call without arguments.
  if (raw.trim() === '') return {};
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

/**
 * The `input` sent to the provider for a stored tool call. Providers require a JSON object here
 * (Anthropic rejects anything else in `tool_use.input`; OpenAI-style APIs want an object-encoding
 * `arguments` string). A stored object passes unchanged; a string holding a JSON object is parsed.
 * Anything else (malformed JSON, an array, a scalar) becomes `{}`: the model still sees the call and,
 * right after it, the tool result explaining that its arguments were invalid, which is the useful
 * part. Echoing the raw text back inside a made-up key would teach the model an argument that
 * does not exist.
 */
export function toPromptToolInput(input: unknown): Record<string, unknown> {
  if (isPlainObject(input)) return input;
  if (typeof input === 'string') {
    try {
      const parsed: unknown = JSON.parse(input);
      if (isPlainObject(parsed)) return parsed;
    } catch {
      // Malformed JSON: fall through to the empty object.
    }
  }
  return {};
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
