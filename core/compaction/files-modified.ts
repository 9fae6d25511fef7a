/**
 * The files changed in a span, derived straight from the tool log rather than from the model's
 * memory (spec S-COMPACT: "so no edited file can be forgotten"), and its text form.
 */
import type { StoredMessage, ToolCallPart, ToolResultPart } from '../messages';
import { TOOL } from '../tool-names';
import { utf8Length } from '../truncate';
import { clipText, oneLine } from './text-excerpt';
import {
  CHANGE_SNIPPET_CHARS,
  CHANGES_SHOWN_PER_FILE,
  COMMAND_MAX_CHARS,
  COMMANDS_SHOWN,
  PATH_MAX_CHARS,
} from './text-limits';

/** One changed file, with a short description of each change, oldest first. */
export interface FileModification {
  path: string;
  changes: string[];
}

/** The files the edit tools changed, and the shell commands that may have changed others. */
export interface FilesModified {
  /** In the order each path was first changed; every path once. */
  files: FileModification[];
  /** bash commands that look like they write (`>`, `tee`, `sed -i`, `mv`, `rm`, …), first run first, each once. */
  possiblyChangedByCommands: string[];
}

/** A tool call with its result, when it has one. */
export interface ToolExchange {
  call: ToolCallPart;
  result?: ToolResultPart;
}

/** Every tool call of `messages` in order, each with the result that answers it (matched by toolCallId). */
export function pairToolCalls(messages: StoredMessage[]): ToolExchange[] {
  const results = new Map<string, ToolResultPart>();
  for (const message of messages) {
    if (message.role !== 'tool') continue;
    for (const part of message.content) {
      if (part.type === 'tool-result' && !results.has(part.toolCallId)) results.set(part.toolCallId, part);
    }
  }
  const exchanges: ToolExchange[] = [];
  for (const message of messages) {
    if (message.role !== 'assistant') continue;
    for (const part of message.content) {
      if (part.type === 'tool-call') exchanges.push({ call: part, result: results.get(part.toolCallId) });
    }
  }
  return exchanges;
}

/** Whether an exchange ran and succeeded; a call without a result may never have run. */
export function succeeded(exchange: ToolExchange): boolean {
  return exchange.result !== undefined && exchange.result.output.type === 'text';
}

function field(input: unknown, name: string): unknown {
  return input !== null && typeof input === 'object' ? (input as Record<string, unknown>)[name] : undefined;
}

function snippet(text: unknown): string {
  return typeof text === 'string' ? clipText(oneLine(text), CHANGE_SNIPPET_CHARS) : '?';
}

/** One line on what a successful file-write or file-edit did. */
function describeChange(call: ToolCallPart): string {
  if (call.toolName === TOOL.fileWrite) {
    const content = field(call.input, 'content');
    return typeof content === 'string' ? `written (${utf8Length(content)} bytes)` : 'written';
  }
  const all = field(call.input, 'replace_all') === true ? ' (all occurrences)' : '';
  const from = snippet(field(call.input, 'old_string'));
  const to = snippet(field(call.input, 'new_string'));
  return `edited${all}: replaced \`${from}\` with \`${to}\``;
}

// Quoted text is stripped first so that `grep "a > b"` or `echo 'rm'` do not count.
const QUOTED = /'[^']*'|"(?:[^"\\]|\\.)*"/g;
const HARMLESS_REDIRECTS = /\d*>&\d+|&>>?\s*\/dev\/null|\d*>>?\s*\/dev\/null/g;
const REDIRECT = /(^|[^=\-<>])>/;
const WRITING_WORDS = /(^|[\s;&|(`])(tee|mv|rm|cp|touch|mkdir|rmdir|ln|truncate|patch|unzip)(?=\s|$)/;
const IN_PLACE = /(^|[\s;&|(`])(sed|perl)\b[^;&|\n]*?\s(-[a-zA-Z]*i[a-zA-Z.]*|--in-place)(?=\s|=|$)/;
const WRITING_GIT =
  /\bgit\s+(apply|checkout|restore|reset|stash|clean|am|cherry-pick|merge|rebase|pull|switch|mv|rm)\b/;
const FORMATTER_WRITE = /\s(--write|--fix)(?=\s|$)|\b(gofmt|goimports)\b[^;&|\n]*\s-w(?=\s|$)/;

/** Whether a shell command looks like it writes or removes files. A heuristic: "possibly". */
export function looksLikeWritingCommand(command: string): boolean {
  const bare = command.replace(QUOTED, '""').replace(HARMLESS_REDIRECTS, ' ');
  return (
    REDIRECT.test(bare) ||
    WRITING_WORDS.test(bare) ||
    IN_PLACE.test(bare) ||
    WRITING_GIT.test(bare) ||
    FORMATTER_WRITE.test(bare)
  );
}

/**
 * The files changed by successful file-write and file-edit calls (a call counts when its result,
 * matched by toolCallId, is not an error), in order of first change, with one description per
 * change. bash commands are not file edits; those that look like they write are listed apart
 * (whatever their exit status: a failing command may still have written).
 */
export function filesModifiedFromToolLog(messages: StoredMessage[]): FilesModified {
  const byPath = new Map<string, string[]>();
  const commands = new Set<string>();
  for (const exchange of pairToolCalls(messages)) {
    const { call } = exchange;
    if (call.toolName === TOOL.bash) {
      const command = field(call.input, 'command');
      if (exchange.result && typeof command === 'string' && looksLikeWritingCommand(command)) {
        commands.add(command);
      }
      continue;
    }
    if (call.toolName !== TOOL.fileWrite && call.toolName !== TOOL.fileEdit) continue;
    const path = field(call.input, 'path');
    if (typeof path !== 'string' || path === '' || !succeeded(exchange)) continue;
    const changes = byPath.get(path) ?? [];
    changes.push(describeChange(call));
    byPath.set(path, changes);
  }
  return {
    files: [...byPath].map(([path, changes]) => ({ path, changes })),
    possiblyChangedByCommands: [...commands],
  };
}

/** What the files-modified text says when the edit tools changed nothing. */
export const NO_FILES_MODIFIED = '(no file-write or file-edit call succeeded in this span)';

/**
 * The files-modified list as Markdown bullets: every path (clipped, never dropped), its latest
 * changes, then the commands that may have changed files. Bounded except for the number of paths.
 */
export function renderFilesModified(modified: FilesModified): string {
  const lines = modified.files.map(({ path, changes }) => {
    const older = changes.length - CHANGES_SHOWN_PER_FILE;
    const shown = changes.slice(Math.max(0, older));
    const prefix = older > 0 ? `(${older} earlier ${older === 1 ? 'change' : 'changes'}); ` : '';
    return `- ${clipText(oneLine(path), PATH_MAX_CHARS)} — ${prefix}${shown.join('; ')}`;
  });
  if (lines.length === 0) lines.push(NO_FILES_MODIFIED);
  const commands = modified.possiblyChangedByCommands;
  if (commands.length > 0) {
    const older = commands.length - COMMANDS_SHOWN;
    lines.push('', 'Commands that may have changed files (not tracked per file):');
    if (older > 0) lines.push(`- (${older} earlier ${older === 1 ? 'command' : 'commands'})`);
    for (const command of commands.slice(Math.max(0, older))) {
      lines.push(`- \`${clipText(oneLine(command), COMMAND_MAX_CHARS)}\``);
    }
  }
  return lines.join('\n');
}
