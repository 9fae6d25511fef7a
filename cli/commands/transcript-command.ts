/**
 * `goalrun transcript <id>`: the session as it happened, from the store: every message in order,
 * with tool calls, results, summaries and steering. JSONL for scripts (one stored message per
 * line), Markdown for people. `--full` expands spooled outputs; known secrets are redacted.
 */

import { redactSecrets } from '../../activities/providers/errors';
import type { AgentRecord } from '../../core/agents';
import { ConfigError } from '../../core/errors';
import { userKindOf } from '../../core/ledger-entry';
import type { StoredMessage, TranscriptEntry } from '../../core/messages';
import { KEY_PREFIX } from '../../core/store-keys';
import { terminalSafe } from '../../core/text';
import type { SessionStore } from '../../store/types';
import type { CliContext } from '../context';
import { resolveSessionId } from '../goal-id';

/** Formats `transcript` prints. */
export const TRANSCRIPT_FORMATS = ['md', 'jsonl'] as const;

/** Bytes read per spool page when expanding an output. */
const SPOOL_PAGE_BYTES = 64 * 1024;

/** `goalrun transcript <id> [--format md|jsonl] [--full]`. */
export async function transcriptCommand(
  context: CliContext,
  id: string | undefined,
  options: { format?: string; full?: boolean; last?: boolean },
): Promise<number> {
  const format = options.format ?? 'md';
  if (!(TRANSCRIPT_FORMATS as readonly string[]).includes(format)) {
    throw new ConfigError(`--format must be md or jsonl, got "${format}"`);
  }
  const sessionId = await resolveSessionId(context, { id, last: options.last });
  const store = await context.sessionStore();
  const session = await store.getSession(sessionId);
  if (!session) throw new ConfigError(`goal ${sessionId} has no transcript yet: no worker has run it`);
  const secrets = context.knownSecrets();
  const entries = await store.listMessages(sessionId);
  // Markdown is for people: control characters in model and tool text are shown, never acted on.
  // JSONL is data and keeps the raw text.
  const shown = format === 'md' ? terminalSafe : (line: string) => line;
  const out = (line: string) => process.stdout.write(`${shown(redactSecrets(line, secrets))}\n`);
  if (format === 'md') {
    out(`# ${session.name ?? session.objective.split('\n')[0]}`);
    out('');
    out(
      `Session \`${session.id}\` · model \`${session.model}\` · workspace \`${session.projectDir}\` · ${session.status}`,
    );
  }
  await printEntries(store, sessionId, entries, { format, full: options.full === true, out, agent: [] });
  return 0;
}

/** How the entries of one session are printed, and where in the tree of sub-agents it is. */
interface PrintOptions {
  format: string;
  full: boolean;
  out: (line: string) => void;
  /** The agent ids from the top goal down to this session (empty for the goal itself). */
  agent: string[];
}

/** Deepest sub-agent nesting printed: a cycle in bad data can never make the command loop. */
const MAX_NESTING = 4;

/**
 * Prints a session's messages in order; a sub-agent's transcript follows the result of the `agent`
 * call that started it, nested: Markdown headings one level deeper, JSONL lines naming the agent.
 */
async function printEntries(
  store: SessionStore,
  sessionId: string,
  entries: TranscriptEntry[],
  options: PrintOptions,
): Promise<void> {
  const { format, out } = options;
  const children = await childrenByCall(store, sessionId);
  const nested = (text: string) =>
    options.agent.length > 0 ? text.replace(/^(#+) /gm, `$1${'#'.repeat(options.agent.length)} `) : text;
  for (const entry of entries) {
    const message = options.full ? await expanded(store, sessionId, entry) : entry.message;
    if (format === 'jsonl') {
      out(
        JSON.stringify({
          ...(options.agent.length > 0 ? { agent: options.agent.join('/'), session: sessionId } : {}),
          seq: entry.seq,
          key: entry.key,
          role: message.role,
          ...(message.role === 'user' ? { kind: userKindOf(entry.key) } : {}),
          content: message.content,
          ...(entry.meta ? { meta: entry.meta } : {}),
        }),
      );
    } else {
      out('');
      out(nested(markdownOf(entry, message)));
    }
    if (message.role !== 'tool' || options.agent.length >= MAX_NESTING) continue;
    for (const part of message.content) {
      const child = children.get(part.toolCallId);
      if (!child) continue;
      if (format === 'md') {
        out('');
        out(nested(`## Sub-agent ${child.agentId}: session \`${child.sessionId}\` · ${child.status}`));
      }
      const childEntries = await store.listMessages(child.sessionId);
      await printEntries(store, child.sessionId, childEntries, {
        ...options,
        agent: [...options.agent, child.agentId],
      });
    }
  }
}

/** The sub-agents a session started, by the agent call that started each (from its saved state). */
async function childrenByCall(store: SessionStore, sessionId: string): Promise<Map<string, AgentRecord>> {
  const state = (await store.getSession(sessionId))?.goalState as
    | { agents?: AgentRecord[] }
    | null
    | undefined;
  return new Map((state?.agents ?? []).map((agent) => [agent.toolCallId, agent]));
}

/** A tool result with its full output read back from the spool, when it was spooled. */
async function expanded(
  store: SessionStore,
  sessionId: string,
  entry: TranscriptEntry,
): Promise<StoredMessage> {
  const spoolId = entry.meta?.tool?.spoolId ?? spoolIdInFooter(entry.message);
  if (entry.message.role !== 'tool' || spoolId === undefined) return entry.message;
  let text = '';
  let offset: number | null = 0;
  while (offset !== null) {
    const page = await store.readSpool(sessionId, spoolId, offset, SPOOL_PAGE_BYTES);
    if (!page) return entry.message;
    text += page.content;
    offset = page.nextOffset;
  }
  return {
    role: 'tool',
    content: entry.message.content.map((part) => ({ ...part, output: { ...part.output, value: text } })),
  };
}

/** The spool id a truncated result names in its footer. */
function spoolIdInFooter(message: StoredMessage): number | undefined {
  if (message.role !== 'tool') return undefined;
  const match = /"id":"spool:(\d+)"/.exec(message.content[0]?.output.value ?? '');
  return match ? Number(match[1]) : undefined;
}

/** One message as Markdown. */
function markdownOf(entry: TranscriptEntry, message: StoredMessage): string {
  const fence = (text: string) => `\`\`\`\n${text.replaceAll('```', '`\u200b``')}\n\`\`\``;
  switch (message.role) {
    case 'user': {
      const text = message.content
        .map((part) =>
          part.type === 'text' ? part.text : `\n[image ${part.name}, ${part.mediaType}, ${part.bytes} bytes]`,
        )
        .join('');
      const heading = entry.key.startsWith(KEY_PREFIX.summary)
        ? 'Summary'
        : entry.key.startsWith(KEY_PREFIX.steering)
          ? `Steering${entry.meta?.from ? ` from ${entry.meta.from}` : ''}`
          : userKindOf(entry.key) === 'first'
            ? 'Task'
            : 'goalrun';
      return `## ${heading} (#${entry.seq})\n\n${text}`;
    }
    case 'assistant': {
      const parts = message.content.map((part) =>
        part.type === 'text'
          ? part.text
          : `**${part.toolName}** \`${part.toolCallId}\`\n\n${fence(JSON.stringify(part.input, null, 2))}`,
      );
      return `## Assistant (#${entry.seq})\n\n${parts.join('\n\n')}`;
    }
    case 'tool':
      return message.content
        .map(
          (part) =>
            `### Result of ${part.toolName} \`${part.toolCallId}\`${part.output.type === 'error-text' ? ' (error)' : ''} (#${entry.seq})\n\n${fence(part.output.value)}`,
        )
        .join('\n\n');
  }
}
