/**
 * A tool call's result message as the store keeps it, and the result an earlier attempt stored, read
 * back (a retried call answers from it instead of running the tool again).
 */
import { ledgerEntryFor } from '../core/ledger-entry';
import { TOOL_RESULT_MAX_CHARS } from '../core/limits';
import type { StoredMessage } from '../core/messages';
import { storeKeys } from '../core/store-keys';
import { truncateForModel } from '../core/truncate';
import type { SessionStore, ToolResultFacts } from '../store/types';
import type { RunToolInput, RunToolResult } from './types';

/** A background job started by a call, as the workflow records it. */
export interface StartedJobRef {
  jobId: string;
  command: string;
  /** The task queue of the tool host that runs the job (reads and kills must go there). */
  processQueue: string;
  pid?: number;
}

/** The tool activity's result as CONTRACTS.md specifies RunToolResult, plus the stub facts. */
export interface ToolRunResult extends RunToolResult {
  /** The facts a compaction stub needs (also in the tool event's data). */
  facts: ToolResultFacts;
  job?: StartedJobRef;
  killedJobs?: string[];
}

/** The message that answers a tool call: its output, cut to the model's share when it was spooled. */
export function resultMessage(
  toolCallId: string,
  toolName: string,
  ok: boolean,
  output: string,
  spoolId: number | undefined,
): StoredMessage {
  const shown = spoolId === undefined ? output : truncateForModel(output, spoolId, TOOL_RESULT_MAX_CHARS);
  return {
    role: 'tool',
    content: [
      {
        type: 'tool-result',
        toolCallId,
        toolName,
        output: ok ? { type: 'text', value: shown } : { type: 'error-text', value: shown },
      },
    ],
  };
}

export /** The result an earlier attempt stored, with its facts and job read back from its event. */
async function storedResult(
  store: SessionStore,
  input: RunToolInput,
  seq: number,
  key: string,
  message: StoredMessage,
  processQueue: string,
): Promise<ToolRunResult> {
  const event = await store.getEventByKey(input.sessionId, storeKeys.toolEvent(input.toolCallId));
  const data = (event?.data ?? {}) as Partial<ToolResultFacts> & {
    job?: StartedJobRef;
    killedJobs?: string[];
    callDigest?: string;
    outputDigest?: string;
    waited?: true;
  };
  const part = message.role === 'tool' ? message.content[0] : undefined;
  const facts: ToolResultFacts = {
    ok: data.ok ?? part?.output.type === 'text',
    changedWorkspace: data.changedWorkspace ?? true,
    bytes: data.bytes ?? 0,
    ...(typeof data.chars === 'number' ? { chars: data.chars } : {}),
    ...(typeof data.spoolId === 'number' ? { spoolId: data.spoolId } : {}),
    lines: data.lines ?? 0,
    firstLine: data.firstLine ?? '',
    lastLine: data.lastLine ?? '',
    argsDigest: data.argsDigest ?? '',
  };
  return {
    entry: ledgerEntryFor(seq, key, message, { spoolId: facts.spoolId, bytes: data.bytes, ok: facts.ok }),
    ok: facts.ok,
    changedWorkspace: facts.changedWorkspace,
    firstLine: facts.firstLine,
    lastLine: facts.lastLine,
    facts,
    ...(data.callDigest ? { callDigest: data.callDigest } : {}),
    ...(data.outputDigest ? { outputDigest: data.outputDigest } : {}),
    ...(data.waited ? { waited: true as const } : {}),
    ...(data.job ? { job: { ...data.job, processQueue: data.job.processQueue ?? processQueue } } : {}),
    ...(data.killedJobs ? { killedJobs: data.killedJobs } : {}),
  };
}
