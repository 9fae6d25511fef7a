/**
 * The structured transcript as goalrun stores it. The shape follows the AI SDK's provider prompt
 * (LanguageModelV3) so a stored message goes to any provider without a lossy conversion, but it is
 * declared here so that core/ and workflows/ do not depend on the SDK.
 */
import type { RequestUsage } from './usage';

/** Plain text written by the user, the model or goalrun itself. */
export interface TextPart {
  type: 'text';
  text: string;
}

/** A tool call made by the model. `input` is the parsed JSON arguments, or the raw string when it did not parse. */
export interface ToolCallPart {
  type: 'tool-call';
  toolCallId: string;
  toolName: string;
  input: unknown;
}

/** The answer to one tool call, as the model will see it. */
export interface ToolResultPart {
  type: 'tool-result';
  toolCallId: string;
  toolName: string;
  output: { type: 'text'; value: string } | { type: 'error-text'; value: string };
}

/**
 * An image given with `--image`, by reference: its bytes are a row of the store's `images` table,
 * read when a request is built, so neither the transcript nor any Temporal payload carries them.
 */
export interface ImagePart {
  type: 'image';
  imageId: number;
  mediaType: string;
  bytes: number;
  /** The file's base name, for transcripts and for the text a request carries if the image is gone. */
  name: string;
}

/** One message of a session's transcript. The system prompt is not stored: it is rebuilt per request. */
export type StoredMessage =
  | { role: 'user'; content: Array<TextPart | ImagePart> }
  | { role: 'assistant'; content: Array<TextPart | ToolCallPart> }
  | { role: 'tool'; content: ToolResultPart[] };

/** What is known of a tool's output beyond the (possibly truncated) result the model saw. */
export interface ToolOutputFacts {
  /** Size of the full output in bytes. */
  bytes: number;
  /** Size of the full output in characters (code points). */
  chars?: number;
  /** The spool row holding the full output, when it was spooled. */
  spoolId?: number;
  lines?: number;
  firstLine?: string;
  lastLine?: string;
  ok: boolean;
  changedWorkspace?: boolean;
}

/**
 * Facts stored beside a message that the model is not shown: a model step's usage, a tool output's
 * stub facts, who sent a steering message. Stubs are rendered from these without reading the spool.
 */
export interface MessageMeta {
  usage?: RequestUsage;
  finishReason?: string;
  /** The model that wrote an assistant message. */
  model?: string;
  tool?: ToolOutputFacts;
  /** Who sent a steering message. */
  from?: string;
  /**
   * The ledger key the attempt that received an assistant message records itself under if it fails
   * (core/paid-calls.ts): an attempt that saw its store write fail, when the write had landed after all.
   */
  attemptKey?: string;
}

/** A stored message with its position in the session. */
export interface TranscriptEntry {
  seq: number;
  key: string;
  message: StoredMessage;
  meta?: MessageMeta;
}

/** Builds a user message from text. */
export function userText(text: string): StoredMessage {
  return { role: 'user', content: [{ type: 'text', text }] };
}

/** Every tool call of an assistant message, in order. */
export function toolCallsOf(message: StoredMessage): ToolCallPart[] {
  if (message.role !== 'assistant') return [];
  return message.content.filter((part): part is ToolCallPart => part.type === 'tool-call');
}

/** The concatenated text parts of a message. */
export function textOf(message: StoredMessage): string {
  const parts = message.content as Array<{ type: string; text?: string }>;
  return parts
    .filter((part) => part.type === 'text')
    .map((part) => part.text ?? '')
    .join('');
}

/** The text of a user message (its parts joined); empty for any other role. */
export function userTextOf(message: StoredMessage): string {
  return message.role === 'user'
    ? message.content.map((part) => (part.type === 'text' ? part.text : '')).join('')
    : '';
}
