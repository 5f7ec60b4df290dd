/**
 * Contender (f): the Vercel AI SDK's own agent loop — `generateText` with a zod tool and
 * `stopWhen: stepCountIs(N)` — against its mock language model, measured here rather than
 * taken from the anchor (which came from a machine where (b) ran about 3× faster).
 *
 * The mock answers like react.ts's scripted model: step k reads k from the last tool result
 * (constant time, whatever the conversation's length), proposes `echo({ i: k })` for k < N−1 and
 * answers on the last step. Only react-N: the AI SDK has no concurrent-agent primitive to compare.
 */
import { generateText, stepCountIs, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import type { LanguageModelV3CallOptions, LanguageModelV3GenerateResult } from '@ai-sdk/provider';
import { z } from 'zod';
import { ANSWER, expectAnswer } from './react.ts';
import type { Contender } from './types.ts';

const USAGE: LanguageModelV3GenerateResult['usage'] = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};

/** Index of the next step, read from the last message of the prompt (a tool result echoing `i`). */
function nextIndex(options: LanguageModelV3CallOptions): number {
  const last = options.prompt[options.prompt.length - 1];
  if (last?.role !== 'tool') return 0;
  const part = last.content[0];
  if (part?.type !== 'tool-result') return 0;
  const { output } = part;
  return output.type === 'json' || output.type === 'text' ? Number(output.value) + 1 : 0;
}

/**
 * @example
 * ```ts
 * const runOnce = aiSdk.create({ n: 10, delayMs: 0 });
 * await runOnce();
 * ```
 */
export const aiSdk: Contender = {
  id: 'ai_sdk',
  label: '(f) Vercel AI SDK generateText, mock model',
  create(config) {
    if (config.delayMs > 0) throw new Error('(f) runs react-N with an instant model only.');
    // Built once, like react.ts's steps: the model's own cost stays out of the loop's.
    const steps: LanguageModelV3GenerateResult[] = [];
    for (let k = 0; k < config.n - 1; k++) {
      steps.push({
        content: [{ type: 'tool-call', toolCallId: `call_${k}`, toolName: 'echo', input: `{"i":${k}}` }],
        finishReason: { unified: 'tool-calls', raw: undefined },
        usage: USAGE,
        warnings: [],
      });
    }
    const answer: LanguageModelV3GenerateResult = {
      content: [{ type: 'text', text: ANSWER }],
      finishReason: { unified: 'stop', raw: undefined },
      usage: USAGE,
      warnings: [],
    };
    const model = new MockLanguageModelV3({ doGenerate: async (options) => steps[nextIndex(options)] ?? answer });
    const tools = {
      echo: tool({
        description: 'Echo the number back.',
        inputSchema: z.object({ i: z.number().int() }),
        execute: ({ i }) => i,
      }),
    };
    return async () => {
      const result = await generateText({ model, tools, prompt: 'Count with the echo tool.', stopWhen: stepCountIs(config.n + 1) });
      expectAnswer(result.text, 'Vercel AI SDK');
      if (result.steps.length !== config.n) throw new Error(`Vercel AI SDK: expected ${config.n} steps, got ${result.steps.length}.`);
    };
  },
};
