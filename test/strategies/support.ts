/**
 * Shared by the strategy tests: sub-agents answering from a per-branch script, a judge model
 * answering direct completions by prompt, and a provider wrapper that measures parallelism.
 */
import type { CompletionRequest, InferenceProvider } from '../../src/core/provider.ts';
import type { BranchInfo, SubAgentSource } from '../../src/strategies/subAgent.ts';
import type { Branch } from '../../src/core/strategy.ts';
import { scriptedModel, type ScriptedModel } from '../../src/testing/index.ts';
import type { ScriptStep } from '../../src/testing/scriptStep.ts';

/** Each branch gets its own sub-agent whose scripted model answers once with `reply(branch)`. */
export function answering(reply: (branch: Branch, info: BranchInfo) => ScriptStep | string): SubAgentSource {
  return (branch, info) => {
    const step = reply(branch, info);
    return { model: scriptedModel([typeof step === 'string' ? { text: step } : step]), resilience: { breakers: false } };
  };
}

/** The text of the last user message of a request: the prompt of a direct completion. */
export function promptOf(request: CompletionRequest): string {
  const last = request.messages.at(-1);
  return typeof last?.content === 'string' ? last.content : '';
}

/** A model for `context.complete` that answers each prompt with `reply(prompt)`. */
export function judge(reply: (prompt: string) => string): ScriptedModel {
  return scriptedModel((request) => ({ text: reply(promptOf(request)) }));
}

/** Wraps a provider to count model calls in flight at once. */
export function metered(model: InferenceProvider): { model: InferenceProvider; peak: () => number } {
  let inFlight = 0;
  let peak = 0;
  return {
    peak: () => peak,
    model: {
      name: model.name,
      defaultModel: model.defaultModel,
      supportsNativeTools: model.supportsNativeTools,
      supportsStructuredOutput: model.supportsStructuredOutput,
      stream: (request) => model.stream(request),
      async complete(request) {
        peak = Math.max(peak, ++inFlight);
        try {
          return await model.complete(request);
        } finally {
          inFlight--;
        }
      },
    },
  };
}
