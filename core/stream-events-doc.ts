/**
 * docs/events.md, generated from the zod schemas of the event stream, so the reference never drifts
 * from what `--output-format stream-json` prints. `node scripts/generate-events-doc.js` writes it;
 * a test fails when it is out of date.
 */
import { z } from 'zod';
import { STREAM_EVENT_SCHEMAS, STREAM_EVENT_TYPES, STREAM_TEXT_MAX_BYTES } from './stream-events';

interface JsonSchema {
  type?: string | string[];
  const?: unknown;
  enum?: unknown[];
  anyOf?: JsonSchema[];
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  required?: string[];
}

/** The Markdown of docs/events.md. */
export function renderEventsDoc(): string {
  const lines = [
    '# Event stream (`--output-format stream-json`)',
    '',
    '<!-- Generated from core/stream-events.ts by scripts/generate-events-doc.js: do not edit by hand. -->',
    '',
    '`goalrun run`, `watch` and `resume` with `--output-format stream-json` print one JSON object per line.',
    "The events come from the session's event log in the store, in the order they happened; `cursor` is",
    'the position in that log. `watch --from-start` replays a session from its first event,',
    '`watch --after N` from the event after cursor `N` (to pick a stream up where it broke off); without',
    'either, `watch` prints what happens from now on. The last line of a stream is always a `result`.',
    `Tool arguments and outputs are cut to ${STREAM_TEXT_MAX_BYTES} bytes; \`goalrun transcript --full\` has them whole.`,
    '',
    'With `--include-partial-messages` (`run`, `watch`, `resume`), the stream also has `text_delta` events:',
    "the model's text as it streams in, between the step's `step_start` and its `assistant_text`. They do",
    'not go through Temporal or the transcript: while the stream follows the goal it holds a lease on the',
    'session, and the model step writes its text in throttled rows of the store, which the stream reads',
    'and which are pruned after a while. They are best-effort (`offset` shows a gap), and a retried call',
    'streams again from the start with a new `attempt`; `assistant_text` is the record. A `text_delta` has',
    'the cursor of the last logged event before it.',
    '',
    'Every event has `type`, `session_id` and `cursor`.',
  ];
  for (const type of STREAM_EVENT_TYPES) {
    const schema = STREAM_EVENT_SCHEMAS[type];
    const json = z.toJSONSchema(schema) as JsonSchema;
    lines.push('', `## \`${type}\``, '', schema.description ?? '', '', '| field | type |', '| --- | --- |');
    for (const [name, field] of Object.entries(json.properties ?? {})) {
      if (name === 'type' || name === 'session_id' || name === 'cursor') continue;
      const optional = json.required?.includes(name) ? '' : ' (optional)';
      lines.push(`| \`${name}\` | ${typeName(field)}${optional} |`);
    }
  }
  return `${lines.join('\n')}\n`;
}

function typeName(schema: JsonSchema): string {
  if (schema.enum) return schema.enum.map((value) => `\`${JSON.stringify(value)}\``).join(' \\| ');
  if (schema.anyOf) return schema.anyOf.map(typeName).join(' \\| ');
  if (schema.type === 'array') return `array of ${schema.items ? typeName(schema.items) : 'any'}`;
  if (schema.type === 'object') {
    const fields = Object.entries(schema.properties ?? {}).map(
      ([name, field]) => `${name}: ${typeName(field)}`,
    );
    return `{ ${fields.join(', ')} }`;
  }
  return Array.isArray(schema.type) ? schema.type.join(' \\| ') : (schema.type ?? 'any');
}
