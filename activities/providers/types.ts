import type { StoredMessage, ToolCallPart } from '../../core/messages';
import type { RequestUsage } from '../../core/usage';

/** A tool as the model sees it. */
export interface ToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the arguments object. */
  inputSchema: Record<string, unknown>;
}

/** A prompt-cache entry's lifetime (Anthropic's `cache_control.ttl`). */
export type PromptCacheTtl = '5m' | '1h';

/** Where a request's stable parts end, for providers whose prompt cache needs breakpoints (Anthropic). */
export interface PromptCacheHints {
  /** How many of the request's messages form the head that only a compaction changes. */
  headCount: number;
  ttl: PromptCacheTtl;
}

/** An image's bytes, read from the store for one request. */
export interface ImageData {
  mediaType: string;
  data: Uint8Array;
}

/** One model request. */
export interface ModelRequest {
  system: string;
  messages: StoredMessage[];
  /**
   * What changes from step to step (the task list): sent after the transcript as a last user message,
   * behind every cache breakpoint, so that the prefix before it stays byte-identical between steps.
   */
  tail?: string;
  /** The bytes of the images the messages name, by image id (read from the store by the model step). */
  images?: ReadonlyMap<number, ImageData>;
  /** Cache breakpoints to place; none when absent (the summarizer, scripted models). */
  cache?: PromptCacheHints;
  tools: ToolSpec[];
  /** 1-based number of this step in the goal; the scripted provider replays turn N for step N. */
  stepNumber: number;
  /** What the request is for; a summarizer call carries the 1-based number of the compaction. */
  purpose?: { kind: 'step' } | { kind: 'summary'; compaction: number };
  /** Aborts the HTTP request (the activity's cancellation signal). */
  abortSignal: AbortSignal;
  /** Called with each piece of the answer's text as it streams in (`--include-partial-messages`). */
  onTextDelta?: (text: string) => void;
  /** Called as text or tool-call input streams in, with the number of characters received so far. */
  onProgress?: (receivedChars: number) => void;
  /**
   * Called for every chunk of bytes the provider sends, keep-alives included (the step heartbeats on
   * it); `answering` once the provider accepted the request and sends its answer (a billed call).
   */
  onBytes?: (answering: boolean) => void;
  /** A stream silent this long (ms) fails as ProviderStalled; DEFAULT_STREAM_IDLE_TIMEOUT_S when absent. */
  idleTimeoutMs?: number;
}

/** The model's complete answer to one request. Streamed text is never returned partially. */
export interface ModelResponse {
  text: string;
  toolCalls: ToolCallPart[];
  usage: RequestUsage;
  finishReason: string;
}

/** A configured model. */
export interface ModelClient {
  /** The model specifier it was built from, e.g. `openai:gpt-4o`. */
  readonly spec: string;
  stream(request: ModelRequest): Promise<ModelResponse>;
}

/** Where a model client takes its settings from. Secrets come from here, never from workflow input. */
export interface ProviderEnv {
  /** The key of `openai:` models and of `openai-compatible:` on api.openai.com only. */
  OPENAI_API_KEY?: string;
  /** The default key of an `openai-compatible` endpoint. */
  OPENAI_COMPATIBLE_API_KEY?: string;
  /** Any other variable a goal names as its endpoint's key (`--api-key-env`): the worker reads it. */
  lookup?: (name: string) => string | undefined;
  OPENAI_BASE_URL?: string;
  ANTHROPIC_API_KEY?: string;
  OLLAMA_BASE_URL?: string;
}
