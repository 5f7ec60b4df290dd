/** A run's answer is stored with its task as subject, so a later run on a related task finds it. */
import { contentText } from '../core/messages.ts';
import type { LoopResult } from '../core/run.ts';
import { DEFAULTS } from '../core/defaults.ts';
import type { KnowledgeItem } from './item.ts';
import type { KnowledgeStore } from './store.ts';
import { taintOf } from '../policy/taint.ts';
import { StoreError } from '../persistence/errors.ts';

export const ANSWERED = 'answered';

/** Numbers default to `DEFAULTS.knowledge`. */
export interface RememberOptions {
  /** Default: the last user message of `result.messages` (the loop adds the task last). */
  readonly task?: string;
  /** Characters of the answer kept. Default 1 000. */
  readonly maxChars?: number;
  /** Default 0.5: nobody checked it. */
  readonly confidence?: number;
  /** Working-memory items kept; the oldest go first. Default 500. */
  readonly maxWorkingItems?: number;
  /** Store the answer of a run that read untrusted content: you checked it, as later runs are shown it as trusted knowledge. */
  readonly trusted?: boolean;
}

/**
 * `undefined` when the run did not finish with a non-empty answer or its task is unknown; a newer answer to the same task replaces the older.
 * Throws `knowledge_untrusted` for the answer of a run that read untrusted content, unless `trusted` says it was checked.
 */
export async function rememberResult(store: KnowledgeStore, result: LoopResult, options: RememberOptions = {}): Promise<KnowledgeItem | undefined> {
  if (result.status !== 'done' || result.text === null || result.text.trim() === '') return undefined;
  const taint = taintOf(result.messages);
  if (taint !== undefined && options.trusted !== true) {
    // An answer shaped by outside content would reach every later run as system text, carrying whatever the content dictated.
    throw new StoreError(
      'knowledge_untrusted',
      `The answer of run ${result.runId} depends on untrusted content from ${taint.source}, and was not stored: later runs would be shown it as trusted knowledge. Check it, then pass { trusted: true } to store it.`,
      { runId: result.runId },
    );
  }
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
