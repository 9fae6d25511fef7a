/** `--output-format text | json | stream-json` of run, watch and resume, with `--json` as an alias. */
import { Option } from 'commander';
import { ConfigError } from '../core/errors';

/** How a following command prints. */
export const OUTPUT_FORMATS = ['text', 'json', 'stream-json'] as const;

/** One of OUTPUT_FORMATS. */
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** The option, for commander. */
export function outputFormatOption(): Option {
  return new Option(
    '--output-format <format>',
    'text (live lines), json (one status object at the end, as status --json) or stream-json (one event per line; docs/events.md)',
  ).choices([...OUTPUT_FORMATS]);
}

/** The format the options ask for; `--json` means json. */
export function outputFormatOf(options: { json?: boolean; outputFormat?: string }): OutputFormat {
  const format = options.outputFormat as OutputFormat | undefined;
  if (options.json && format && format !== 'json') {
    throw new ConfigError(
      `--json is the same as --output-format json; it cannot go with --output-format ${format}`,
    );
  }
  return options.json ? 'json' : (format ?? 'text');
}

/** `--include-partial-messages` of run, watch and resume (as `claude -p` has it). */
export function partialMessagesOption(): Option {
  return new Option(
    '--include-partial-messages',
    "with stream-json: also print the model's text as it streams in, as text_delta events (best-effort; assistant_text stays the record)",
  );
}
