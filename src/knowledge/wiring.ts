/**
 * Everything an agent needs for the knowledge bridge, from one config: the preparer, the two
 * tools, and the completion hook that keeps answers as working memory. This is what
 * `createAgent({ knowledge })` plugs in.
 */
import type { MessagePreparer } from '../core/hooks.ts';
import type { LoopResult } from '../core/run.ts';
import { describeError } from '../core/errors.ts';
import type { Tool } from '../tools/types.ts';
import { createKnowledgeBridge, type KnowledgeBridgeOptions } from './bridge.ts';
import type { KnowledgeItem } from './item.ts';
import { rememberResult, type RememberOptions } from './remember.ts';
import type { KnowledgeStore } from './store.ts';
import { createKnowledgeTools, type KnowledgeToolOptions } from './tools.ts';

/**
 * The `knowledge` option of an agent.
 *
 * @example
 * ```ts
 * const knowledge: KnowledgeConfig = { store: await openKnowledgeStore(), maxItems: 3, autoPersist: { confidence: 0.6 } };
 * ```
 */
export interface KnowledgeConfig extends Omit<KnowledgeBridgeOptions, 'store'>, KnowledgeToolOptions {
  /** `createMemoryKnowledgeStore()` or `await openKnowledgeStore({ file })`. */
  readonly store: KnowledgeStore;
  /** Inject relevant items before each reason step. Default true. */
  readonly inject?: boolean;
  /** Give the model `recall_knowledge` and `store_knowledge`. Default true. */
  readonly tools?: boolean;
  /** Keep each final answer as working memory (options tune it). Default true. */
  readonly autoPersist?: boolean | Omit<RememberOptions, 'task'>;
}

/** The parts `createKnowledge` returns. */
export interface KnowledgeParts {
  /** Empty when `inject: false`. */
  readonly preparers: readonly MessagePreparer[];
  /** Empty when `tools: false`. */
  readonly tools: readonly Tool[];
  /**
   * Call when a run ends (any status; only a run done with an answer is remembered). Never
   * rejects: a failed write is reported through `onError` (default a console warning), because
   * memory is a side benefit and must not turn a finished run into a failed one.
   */
  remember(result: LoopResult, task?: string): Promise<KnowledgeItem | undefined>;
}

/**
 * Build the knowledge parts of an agent: what `createAgent({ knowledge })` wires in.
 *
 * @example
 * ```ts
 * const knowledge = createKnowledge({ store: await openKnowledgeStore() });
 * knowledge.tools; // recall_knowledge, store_knowledge
 * await knowledge.remember(result, task);
 * ```
 */
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
