/**
 * The `StrategyContext` handed to each `init`, `step` and `aggregate` call: the task, the
 * call's own AbortSignal, and `complete()` for direct model calls (scoring, critiquing,
 * merging). Usage is counted per call, so the runner can add it to the run's total.
 */
import type { Message } from '../core/messages.ts';
import { ConfigurationError } from '../core/errors.ts';
import { addUsage, ZERO_USAGE, type InferenceProvider, type Usage } from '../core/provider.ts';
import type { StrategyContext } from '../core/strategy.ts';

/** Where `complete()` goes. @example `{ model: scriptedModel([{ text: '7' }]) }` */
export interface CompletionSource {
  readonly model?: InferenceProvider;
  /** Model name override (else the provider's default). */
  readonly modelName?: string;
}

/** A context and a reading of the tokens its `complete()` calls used. @example `const { context, usage } = createStrategyContext(base, source, 'tree');` */
export interface MeteredContext {
  readonly context: StrategyContext;
  usage(): Usage;
  /** USD of those calls, when the model prices them. */
  cost(): number;
}

/**
 * @example
 * ```ts
 * const { context, usage } = createStrategyContext({ task, runId, signal }, { model });
 * const score = await context.complete('Rate 0–10: …');
 * usage().totalTokens; // tokens of that call
 * ```
 */
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
        ...(source.modelName === undefined ? {} : { model: source.modelName }),
        ...(options.temperature === undefined ? {} : { temperature: options.temperature }),
      });
      used = addUsage(used, completion.usage);
      spent += completion.costUsd ?? 0;
      return completion.text ?? '';
    },
  };
  return { context, usage: () => used, cost: () => spent };
}
