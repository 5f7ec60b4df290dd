/**
 * Structured output next to tools, over HTTP with the real `openai` client: a reply that calls
 * tools is not the answer yet, so it is not held to the schema; a final reply that misses the
 * schema is a StructuredOutputError that carries the whole completion (usage included), so the
 * agent loop can feed it back as a repair turn.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { StructuredOutputError } from '../../src/inference/errors.ts';
import { openAICompatible } from '../../src/inference/openaiCompatible.ts';
import { reply, useOpenAIServer } from '../support/openaiServer.ts';

const openai = useOpenAIServer();
const output = { name: 'answer', schema: z.object({ n: z.number() }) };
const messages = [{ role: 'user' as const, content: 'go' }];

function provider() {
  return openAICompatible({ baseURL: openai().baseURL, apiKey: 'test', model: 'gpt-4o-mini', env: {}, retry: { maxRetries: 0 } });
}

describe('structured output with tool calls', () => {
  it('returns a tool-calling reply without checking it against the schema', async () => {
    openai().enqueue(reply.completion({ toolCalls: [{ id: 'c1', name: 'add', argumentPieces: ['{"a":1}'] }] }));
    const completion = await provider().complete({ messages, output, tools: [{ name: 'add', description: 'add', parameters: { type: 'object' } }] });
    expect(completion.toolCalls).toEqual([{ id: 'c1', name: 'add', arguments: '{"a":1}' }]);
    expect(completion.output).toBeUndefined();
  });

  it('rejects a final reply that misses the schema with the completion attached', async () => {
    openai().enqueue(reply.completion({ textPieces: ['{"n":"one"}'], usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 } }));
    const error = await provider().complete({ messages, output }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StructuredOutputError);
    expect((error as StructuredOutputError).completion).toMatchObject({ text: '{"n":"one"}', usage: { totalTokens: 8 } });
  });
});
