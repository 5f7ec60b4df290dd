import type { MessagePreparer } from '../core/hooks.ts';
import type { LoopResult } from '../core/run.ts';
import { describeError } from '../core/errors.ts';
import type { Tool } from '../tools/types.ts';
import { taintOf } from '../policy/taint.ts';
import { createKnowledgeBridge, type KnowledgeBridgeOptions } from './bridge.ts';
import type { KnowledgeItem } from './item.ts';
import { rememberResult, type RememberOptions } from './remember.ts';
import type { KnowledgeStore } from './store.ts';
import { createKnowledgeTools, type KnowledgeToolOptions } from './tools.ts';

export interface KnowledgeConfig extends Omit<KnowledgeBridgeOptions, 'store'>, KnowledgeToolOptions {
  readonly store: KnowledgeStore;
  /** Inject relevant items before each reason step. Default true. */
  readonly inject?: boolean;
  /** Give the model `recall_knowledge` and `store_knowledge`. Default true. */
  readonly tools?: boolean;
  /** Keep each final answer as working memory. Default true. Never the answer of a run that read untrusted content. */
  readonly autoPersist?: boolean | Omit<RememberOptions, 'task'>;
}

export interface KnowledgeParts {
  readonly preparers: readonly MessagePreparer[];
  readonly tools: readonly Tool[];
  /**
   * Never rejects (a failed write goes to `onError`): memory must not turn a finished run into a failed one.
   * The answer of a run that read untrusted content is not kept (`onUntrusted` hears of it).
   */
  remember(result: LoopResult, task?: string): Promise<KnowledgeItem | undefined>;
}

/** Said once per agent, naming the first such run: agents whose tools all read outside content would repeat it every run. */
function noteOnce(): (result: LoopResult, source: string) => void {
  let said = false;
  return (result, source) => {
    if (said) return;
    said = true;
    console.warn(
      `[actorloop] knowledge: the answer of run ${result.runId} was not remembered, as the run read untrusted content from ${source}; ` +
        'answers of such runs are never kept (this is said once), since later runs would be shown them as trusted knowledge. Add what you have checked to the store yourself.',
    );
  };
}

/** What `createAgent({ knowledge })` wires in. */
export function createKnowledge(
  config: KnowledgeConfig,
  onError: (error: unknown, result: LoopResult) => void = (error, result) =>
    console.warn(`[actorloop] knowledge: the answer of run ${result.runId} was not remembered: ${describeError(error)}`),
  onUntrusted: (result: LoopResult, source: string) => void = noteOnce(),
): KnowledgeParts {
  const { store } = config;
  const persist = config.autoPersist ?? true;
  const rememberOptions: Omit<RememberOptions, 'task'> = typeof persist === 'object' ? persist : {};
  return {
    preparers: config.inject === false ? [] : [createKnowledgeBridge(config)],
    tools: config.tools === false ? [] : createKnowledgeTools(store, config),
    async remember(result, task) {
      if (persist === false) return undefined;
      // An answer shaped by outside content could carry an injection into every later run as system text.
      const taint = taintOf(result.messages);
      if (taint !== undefined) {
        onUntrusted(result, taint.source);
        return undefined;
      }
      try {
        return await rememberResult(store, result, task === undefined ? rememberOptions : { ...rememberOptions, task });
      } catch (error) {
        onError(error, result);
        return undefined;
      }
    },
  };
}
