/**
 * Project instructions (AGENTS.md, CLAUDE.md as the fallback): the cap on their size and how they
 * are shown to the model. Pure: the tool host finds and reads the files (activities/extensions).
 */
import { clipHeadBytes } from '../text';

/** The instructions of a goal, all files together, are capped at this many bytes (config `instructions_max_kib`). */
export const DEFAULT_INSTRUCTIONS_MAX_BYTES = 32 * 1024;
/** The file names read in each directory, the first one found wins (CLAUDE.md only where no AGENTS.md is). */
export const INSTRUCTION_FILE_NAMES: readonly string[] = ['AGENTS.md', 'CLAUDE.md'];

/** One file's text, with the label the model sees it under (a path relative to the git root, or `~goalrun`). */
export interface InstructionSource {
  label: string;
  text: string;
}

/** What of one file is in effect. */
export interface InstructionFileFacts {
  label: string;
  bytes: number;
  /** Bytes shown to the model (less than `bytes` when the cap cut it, 0 when it was left out). */
  shownBytes: number;
}

/** The instructions in effect: the text for the system prompt, the files, and what the cap cut. */
export interface CappedInstructions {
  /** The text for the system prompt, empty when there are no instructions. */
  text: string;
  files: InstructionFileFacts[];
  /** One line naming what the cap cut, or null. */
  notice: string | null;
}

const encoder = new TextEncoder();

function byteLength(text: string): number {
  return encoder.encode(text).length;
}

/** The longest prefix of `text` within `maxBytes` bytes, ending at a line break when one is near. */
function clipToBytes(text: string, maxBytes: number): string {
  const clipped = clipHeadBytes(text, maxBytes);
  const end = clipped.length;
  const lastBreak = clipped.lastIndexOf('\n');
  return lastBreak > end / 2 ? clipped.slice(0, lastBreak + 1) : clipped;
}

function kib(bytes: number): string {
  return `${Math.round((bytes / 1024) * 10) / 10} KiB`;
}

/**
 * The files in order, within `maxBytes` in all: whole files while they fit, the first that does not
 * fit cut short, the rest left out; the notice says which.
 */
export function capInstructions(
  sources: readonly InstructionSource[],
  maxBytes: number = DEFAULT_INSTRUCTIONS_MAX_BYTES,
): CappedInstructions {
  let left = maxBytes;
  const files: InstructionFileFacts[] = [];
  const sections: string[] = [];
  const cut: string[] = [];
  const omitted: string[] = [];
  for (const source of sources) {
    const text = source.text.trim();
    if (text === '') continue;
    const bytes = byteLength(text);
    if (bytes <= left) {
      files.push({ label: source.label, bytes, shownBytes: bytes });
      sections.push(`## ${source.label}\n\n${text}`);
      left -= bytes;
      continue;
    }
    const shown = left > 0 ? clipToBytes(text, left) : '';
    const shownBytes = byteLength(shown);
    files.push({ label: source.label, bytes, shownBytes });
    if (shownBytes > 0) {
      sections.push(
        `## ${source.label}\n\n${shown}\n[… cut by goalrun: ${bytes - shownBytes} more bytes over the ${kib(maxBytes)} cap on project instructions]`,
      );
      cut.push(`${source.label} (${shownBytes} of ${bytes} bytes shown)`);
    } else {
      omitted.push(source.label);
    }
    // What follows a cut file is left out, even if it would fit the bytes the cut left over.
    left = 0;
  }
  const problems = [
    ...(cut.length > 0 ? [`cut ${cut.join(', ')}`] : []),
    ...(omitted.length > 0 ? [`left out ${omitted.join(', ')}`] : []),
  ];
  const notice =
    problems.length > 0
      ? `project instructions are over their ${kib(maxBytes)} cap (instructions_max_kib): ${problems.join('; ')}`
      : null;
  const text =
    sections.length > 0
      ? [
          'Project instructions (from AGENTS.md files of the user and the repository; follow them, the deeper file wins where they disagree):',
          ...sections,
        ].join('\n\n')
      : '';
  return { text, files, notice };
}

/** The message that brings a nested directory's instructions to the model when it first works there. */
export function nestedInstructionsText(label: string, text: string, maxBytes: number): string {
  const trimmed = text.trim();
  const shown =
    byteLength(trimmed) > maxBytes ? `${clipToBytes(trimmed, maxBytes)}\n[… cut by goalrun]` : trimmed;
  return `[goalrun: project instructions for this directory, from ${label}; they apply to work under it]\n${shown}`;
}
