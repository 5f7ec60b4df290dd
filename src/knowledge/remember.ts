/**
 * Working memory: a run that ends with an answer leaves that answer in the
 * knowledge store — subject the task, object the answer (capped) — so a later run on the same
 * or a related task finds it through the bridge or `recall_knowledge`.
 */
import { contentText } from '../core/messages.ts';
import type { LoopResult } from '../core/run.ts';
import { DEFAULTS } from '../core/defaults.ts';
import type { KnowledgeItem } from './item.ts';
import type { KnowledgeStore } from './store.ts';

/**
 * The predicate of every working-memory item.
 *
 * @example
 * ```ts
 * store.items().filter((i) => i.scope === 'working' && i.predicate === ANSWERED);
 * ```
 */
export const ANSWERED = 'answered';

/** Options of `rememberResult`; numbers default to `DEFAULTS.knowledge`. */
export interface RememberOptions {
  /** The task of the run. Default: the last user message of `result.messages` (the loop adds the task last). */
  readonly task?: string;
  /** Characters of the answer kept. Default 1 000. */
  readonly maxChars?: number;
  /** Confidence given to the answer. Default 0.5 (nobody checked it). */
  readonly confidence?: number;
  /** Working-memory items kept; the oldest go first. Default 500. */
  readonly maxWorkingItems?: number;
}

/**
 * Store the final answer of `result` as working memory; resolves to the stored item, or to
 * `undefined` when there is nothing to remember (the run did not finish with a non-empty answer,
 * or its task is unknown). A newer answer to the same task replaces the older one.
 *
 * @example
 * ```ts
 * const result = await agent.run('What is the capital of France?');
 * await rememberResult(store, result);
 * // { subject: 'What is the capital of France?', predicate: 'answered', object: 'Paris.', scope: 'working', … }
 * ```
 */
export async function rememberResult(store: KnowledgeStore, result: LoopResult, options: RememberOptions = {}): Promise<KnowledgeItem | undefined> {
  if (result.status !== 'done' || result.text === null || result.text.trim() === '') return undefined;
  const task = (options.task ?? lastUserMessage(result))?.trim();
  if (task === undefined || task === '') return undefined;
  const maxChars = options.maxChars ?? DEFAULTS.knowledge.workingMemoryMaxChars;
  const maxWorking = options.maxWorkingItems ?? DEFAULTS.knowledge.maxWorkingItems;
  const answer = result.text.trim();
  const subject = cap(task, maxChars);
  const object = cap(answer, maxChars);

  // Drop earlier answers to the same task, and the oldest answers past the cap (making room for this one).
  const working = store.items().filter((item) => item.scope === 'working');
  const same = (item: KnowledgeItem) => item.predicate === ANSWERED && item.subject === subject;
  const others = working.filter((item) => !same(item)).sort((a, b) => a.createdAt - b.createdAt);
  const overflow = new Set(others.slice(0, Math.max(0, others.length - (maxWorking - 1))).map((item) => item.id));

  return store.add(
    {
      subject,
      predicate: ANSWERED,
      object,
      confidence: options.confidence ?? DEFAULTS.knowledge.workingMemoryConfidence,
      scope: 'working',
      source: `run:${result.runId}`,
    },
    { replace: (item) => item.scope === 'working' && (same(item) || overflow.has(item.id)) },
  );
}

function lastUserMessage(result: LoopResult): string | undefined {
  for (let i = result.messages.length - 1; i >= 0; i--) {
    const message = result.messages[i];
    if (message?.role === 'user') return contentText(message.content);
  }
  return undefined;
}

function cap(text: string, maxChars: number): string {
  return text.length <= maxChars ? text : `${text.slice(0, Math.max(0, maxChars - 1))}…`;
}
