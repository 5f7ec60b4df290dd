import type { MessagePreparer } from '../core/hooks.ts';
import type { LoopResult } from '../core/run.ts';
import { describeError } from '../core/errors.ts';
import type { Tool } from '../tools/types.ts';
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
  /** Keep each final answer as working memory. Default true. */
  readonly autoPersist?: boolean | Omit<RememberOptions, 'task'>;
}

export interface KnowledgeParts {
  readonly preparers: readonly MessagePreparer[];
  readonly tools: readonly Tool[];
  /** Never rejects (a failed write goes to `onError`): memory must not turn a finished run into a failed one. */
  remember(result: LoopResult, task?: string): Promise<KnowledgeItem | undefined>;
}

/** What `createAgent({ knowledge })` wires in. */
export function createKnowledge(
  config: KnowledgeConfig,
  onError: (error: unknown, result: LoopResult) => void = (error, result) =>
    console.warn(`[actorloop] knowledge: the answer of run ${result.runId} was not remembered: ${describeError(error)}`),
): KnowledgeParts {
  const { store } = config;
  const persist = config.autoPersist ?? true;
  const rememberOptions: Omit<RememberOptions, 'task'> = typeof persist === 'object' ? persist : {};
  return {
    preparers: config.inject === false ? [] : [createKnowledgeBridge(config)],
    tools: config.tools === false ? [] : createKnowledgeTools(store, config),
    async remember(result, task) {
      if (persist === false) return undefined;
      try {
        return await rememberResult(store, result, task === undefined ? rememberOptions : { ...rememberOptions, task });
      } catch (error) {
        onError(error, result);
        return undefined;
      }
    },
  };
}
