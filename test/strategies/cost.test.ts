import { describe, expect, it } from 'vitest';
import type { Completion, CompletionRequest, InferenceProvider, StreamEvent } from '../../src/index.ts';
import { runStrategy, strategies } from '../../src/strategies/index.ts';

/** A model that answers `text` and prices every call at `costUsd`, counting its calls. */
function priced(text: string, costUsd: number): InferenceProvider & { calls: number } {
  const model = {
    name: 'priced',
    defaultModel: 'm',
    supportsNativeTools: true,
    supportsStructuredOutput: false,
    calls: 0,
    async complete<T>(_request: CompletionRequest<T>): Promise<Completion<T>> {
      model.calls++;
      return { text, toolCalls: [], finishReason: 'stop', usage: { promptTokens: 1, completionTokens: 1, totalTokens: 2 }, model: 'm', costUsd };
    },
    async *stream<T>(request: CompletionRequest<T>): AsyncIterable<StreamEvent<T>> {
      yield { type: 'done', completion: await model.complete(request) };
    },
  };
  return model;
}

describe('strategy cost', () => {
  it("sums the cost of every sub-agent's run and every direct model call into the result", async () => {
    const branchModel = priced('42', 0.01);
    const judgeModel = priced('0.9', 0.5);
    const result = await runStrategy({
      strategy: strategies.vote({ samples: 3, scorer: 'model' }),
      task: 'What is 6 * 7?',
      subAgent: { model: branchModel },
      model: judgeModel,
    });
    expect(result.status).toBe('done');
    expect(branchModel.calls).toBe(3);
    expect(judgeModel.calls).toBeGreaterThan(0);
    expect(result.costUsd).toBeCloseTo(3 * 0.01 + judgeModel.calls * 0.5, 10);
    expect(result.usage.totalTokens).toBe(2 * (branchModel.calls + judgeModel.calls));
  });
});
