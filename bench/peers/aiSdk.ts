/**
 * Peer: the Vercel AI SDK's agent loop — `generateText` with a zod tool and
 * `stopWhen: stepCountIs(N + 1)` — driven by the react-N script through a hand-written
 * `LanguageModelV4`, the SDK's custom-model interface.
 */
import type { LanguageModelV4, LanguageModelV4CallOptions, LanguageModelV4GenerateResult } from '@ai-sdk/provider';
import { generateText, stepCountIs, tool } from 'ai';
import { z } from 'zod';
import { TASK, TOOL_DESCRIPTION, TOOL_NAME, expectAnswer, newCounts, nextStep, sleep, type CallCounts, type ReactConfig } from '../scenarios/react.ts';
import type { Contender } from '../scenarios/types.ts';

const usage: LanguageModelV4GenerateResult['usage'] = {
  inputTokens: { total: 0, noCache: 0, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 0, text: 0, reasoning: undefined },
};

function lastToolResult(options: LanguageModelV4CallOptions): string | undefined {
  const last = options.prompt.at(-1);
  if (last?.role !== 'tool') return undefined;
  const part = last.content.at(-1);
  return part?.type === 'tool-result' ? JSON.stringify(part.output) : undefined;
}

function scriptedModel(config: ReactConfig, counts: CallCounts): LanguageModelV4 {
  return {
    specificationVersion: 'v4',
    provider: 'bench',
    modelId: 'react',
    supportedUrls: {},
    async doGenerate(options) {
      counts.model++;
      if (config.delayMs > 0) await sleep(config.delayMs);
      const step = nextStep(lastToolResult(options), config.n);
      return 'call' in step
        ? { content: [{ type: 'tool-call', toolCallId: `c${step.call}`, toolName: TOOL_NAME, input: JSON.stringify({ i: step.call }) }], finishReason: { unified: 'tool-calls', raw: undefined }, usage, warnings: [] }
        : { content: [{ type: 'text', text: step.answer }], finishReason: { unified: 'stop', raw: undefined }, usage, warnings: [] };
    },
    doStream() {
      throw new Error('The react-N script answers generateText only.');
    },
  };
}

/** The echo tool as AI SDK tools, counting its calls. */
export function aiSdkTools(counts: { tool: number }) {
  return {
    [TOOL_NAME]: tool({
      description: TOOL_DESCRIPTION,
      inputSchema: z.object({ i: z.number().int() }),
      execute: ({ i }) => {
        counts.tool++;
        return String(i);
      },
    }),
  };
}

export const aiSdk: Contender = {
  id: 'ai_sdk',
  label: 'Vercel AI SDK 7: generateText, custom LanguageModelV4',
  create(config) {
    const counts = newCounts();
    const model = scriptedModel(config, counts);
    const tools = aiSdkTools(counts);
    return {
      counts,
      async run() {
        const result = await generateText({ model, tools, prompt: TASK, stopWhen: stepCountIs(config.n + 1) });
        expectAnswer(result.text, aiSdk.label);
      },
    };
  },
};
