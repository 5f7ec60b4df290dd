import type { Message } from '../core/messages.ts';
import { ConfigurationError } from '../core/errors.ts';
import { addUsage, ZERO_USAGE, type InferenceProvider, type Usage } from '../core/provider.ts';
import type { StrategyContext } from '../core/strategy.ts';
import { defined } from '../core/defined.ts';

export interface CompletionSource {
  readonly model?: InferenceProvider;
  readonly modelName?: string;
}

/** Usage is counted per context, so the runner can add it to the run's total. */
export interface MeteredContext {
  readonly context: StrategyContext;
  usage(): Usage;
  cost(): number;
}

export function createStrategyContext(
  base: { readonly task: string; readonly runId: string; readonly signal: AbortSignal },
  source: CompletionSource,
  strategyName: string,
): MeteredContext {
  let used: Usage = ZERO_USAGE;
  let spent = 0;
  const context: StrategyContext = {
    task: base.task,
    runId: base.runId,
    signal: base.signal,
    async complete(prompt, options = {}) {
      if (source.model === undefined) {
        throw new ConfigurationError(
          `Strategy "${strategyName}" asked the model directly (context.complete) but the run has no model: pass \`model\` to runStrategy (an InferenceProvider such as openAICompatible()), or give the strategy a function (scorer, critique, merge, difficulty) instead.`,
        );
      }
      const messages: Message[] = [];
      if (options.system !== undefined && options.system !== '') messages.push({ role: 'system', content: options.system });
      messages.push({ role: 'user', content: prompt });
      const completion = await source.model.complete({
        messages,
        signal: base.signal,
        ...defined({ model: source.modelName, temperature: options.temperature }),
      });
      used = addUsage(used, completion.usage);
      spent += completion.costUsd ?? 0;
      return completion.text ?? '';
    },
  };
  return { context, usage: () => used, cost: () => spent };
}
