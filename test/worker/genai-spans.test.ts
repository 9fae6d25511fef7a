import { SpanKind } from '@opentelemetry/api';
import { expect, it, describe as suite } from 'vitest';
import { describe, usageAttributes } from '../../worker/genai-spans';

suite('GenAI spans of activities', () => {
  it('names a model step chat {model}, with the provider, the session and the step', () => {
    const span = describe(
      'modelStep',
      { sessionId: 's1', stepNumber: 4, model: 'anthropic:claude-haiku-4-5' },
      2,
    );
    expect(span?.name).toBe('chat claude-haiku-4-5');
    expect(span?.kind).toBe(SpanKind.CLIENT);
    expect(span?.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'anthropic',
      'gen_ai.request.model': 'claude-haiku-4-5',
      'gen_ai.conversation.id': 's1',
      'goalrun.step': 4,
      'goalrun.purpose': 'step',
      'goalrun.attempt': 2,
    });
  });

  it('names a summary chat too, and a workspace tool execute_tool {tool}', () => {
    expect(
      describe('summarize', { sessionId: 's1', compaction: 2, model: 'openai:gpt-4o' }, 1)?.attributes,
    ).toMatchObject({ 'goalrun.purpose': 'summary', 'goalrun.compaction': 2 });
    const tool = describe(
      'runTool',
      { sessionId: 's1', stepNumber: 3, toolCallId: 'call_1', toolName: 'bash', workspace: '/w' },
      1,
    );
    expect(tool?.name).toBe('execute_tool bash');
    expect(tool?.attributes).toMatchObject({ 'gen_ai.tool.name': 'bash', 'gen_ai.tool.call.id': 'call_1' });
    // No argument, no workspace path: ids and names only.
    expect(JSON.stringify(tool?.attributes)).not.toContain('/w');
  });

  it('leaves other activities alone', () => {
    expect(describe('appendMessage', { sessionId: 's1' }, 1)).toBeNull();
  });

  it('puts token usage, cache reads and writes in GenAI attributes', () => {
    expect(
      usageAttributes({ inputTokens: 1000, outputTokens: 50, cacheReadTokens: 800, cacheWriteTokens: 100 }),
    ).toEqual({
      'gen_ai.usage.input_tokens': 1000,
      'gen_ai.usage.output_tokens': 50,
      'gen_ai.usage.cache_read.input_tokens': 800,
      'gen_ai.usage.cache_creation.input_tokens': 100,
    });
  });
});
