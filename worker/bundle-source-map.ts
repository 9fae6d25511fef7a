/**
 * The workflow bundle's inline source map, moved out of the bundle. The SDK insists on an inline map
 * (a bundle without one is refused), but every worker start pays for it: it decodes and parses the
 * map, re-encodes it, posts it to each workflow thread and keeps it there. goalrun's bundle is 1.9 MB
 * of code and carried 3.5 MB of map (its sources' full text among it), and nothing at run time reads
 * it: workflows/promise-stacks.ts formats the isolate's stacks itself, in bundle positions. So the
 * bundle keeps an empty map and the full one goes to a file beside it, for a person mapping a bundle
 * position by hand. Measured: 240 ms less CPU for each worker start (docs/performance.md).
 */

/** How the SDK finds the inline map: the last data URL comment of the bundle. */
const INLINE_MAP_COMMENT = '//# sourceMappingURL=data:';
const BASE64_TAG = 'base64,';

/** A bundle whose inline map was replaced by an empty one, and the map it had. */
export interface SlimBundle {
  /** The bundle's code, ending with an inline map that has no sources or mappings. */
  code: string;
  /** The bundle's original source map, as JSON text. */
  map: string;
}

/** Thrown when a bundle has no inline map to move (the SDK's bundler always writes one). */
export class NoInlineSourceMapError extends Error {
  readonly type = 'NoInlineSourceMapError';
}

/** Replaces a bundle's inline source map with an empty one and returns the original beside it. */
export function slimSourceMap(bundle: string): SlimBundle {
  const comment = bundle.lastIndexOf(INLINE_MAP_COMMENT);
  const tag = comment < 0 ? -1 : bundle.indexOf(BASE64_TAG, comment);
  if (tag < 0) throw new NoInlineSourceMapError('the workflow bundle has no inline base64 source map');
  const map = Buffer.from(bundle.slice(tag + BASE64_TAG.length).trimEnd(), 'base64').toString('utf8');
  const parsed = JSON.parse(map) as { file?: unknown };
  // The SDK reads `file` to name the script; the rest may be empty.
  const empty = { version: 3, file: parsed.file, sources: [], names: [], mappings: '' };
  const code = `${bundle.slice(0, comment)}${INLINE_MAP_COMMENT}application/json;base64,${Buffer.from(
    JSON.stringify(empty),
  ).toString('base64')}\n`;
  return { code, map };
}
