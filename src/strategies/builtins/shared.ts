/**
 * What the built-in strategies share: scoring (a function or the model), answer normalisation
 * for votes, thought filters, and the rule for function-valued options (they cannot live in
 * the strategy's persistable state, so they are bound when the strategy is created).
 */
import { ConfigurationError } from '../../core/errors.ts';
import type { StrategyContext, Thought } from '../../core/strategy.ts';

/**
 * Scores a thought; higher is better (the built-ins' model scorer returns 0–1).
 *
 * @example
 * ```ts
 * const byLength: Scorer = (thought) => thought.content.length;
 * ```
 */
export type Scorer = (thought: Thought, context: StrategyContext) => number | Promise<number>;

/** A thought with its score settled. @example `{ id: 't0', content: '42', score: 0.8 }` */
export type ScoredThought = Thought & { readonly score: number };

/**
 * True when a branch produced a usable thought: no `metadata.error` and some content.
 *
 * @example
 * ```ts
 * usable({ id: 'b0', content: '', metadata: { error: 'boom' } }); // false
 * ```
 */
export function usable(thought: Thought): boolean {
  return thought.metadata?.error === undefined && thought.content.trim() !== '';
}

/**
 * The first number in a text (`"Score: 7/10"` → 7), or `undefined`.
 *
 * @example
 * ```ts
 * firstNumber('I rate it 8.5 out of 10'); // 8.5
 * ```
 */
export function firstNumber(text: string): number | undefined {
  const match = /-?\d+(?:\.\d+)?/.exec(text);
  return match === null ? undefined : Number(match[0]);
}

/**
 * Ask the model to rate a candidate from 0 to 10; returns 0–1 (0 when the reply has no number).
 *
 * @example
 * ```ts
 * const score = await modelScore(thought, context); // 0.7 for a reply of "7"
 * ```
 */
export async function modelScore(thought: Thought, context: StrategyContext): Promise<number> {
  const reply = await context.complete(
    `Task:\n${context.task}\n\nCandidate:\n${thought.content}\n\n` +
      'Rate from 0 to 10 how likely this candidate is correct and leads to a complete answer to the task. Reply with the number only.',
    { temperature: 0 },
  );
  const value = firstNumber(reply);
  return value === undefined ? 0 : Math.min(10, Math.max(0, value)) / 10;
}

/**
 * Score thoughts in parallel with `scorer` (or the model when it is `'model'`), keeping order.
 * A thought that already has a score keeps it.
 *
 * @example
 * ```ts
 * const scored = await scoreAll(thoughts, (t) => t.content.length, context);
 * ```
 */
export async function scoreAll(thoughts: readonly Thought[], scorer: Scorer | 'model', context: StrategyContext): Promise<ScoredThought[]> {
  const score = scorer === 'model' ? modelScore : scorer;
  return Promise.all(
    thoughts.map(async (t): Promise<ScoredThought> => {
      if (t.score !== undefined) return { ...t, score: t.score };
      const value = await score(t, context);
      return { ...t, score: Number.isFinite(value) ? value : 0 };
    }),
  );
}

/**
 * Best first; ties keep their original order (the earlier branch wins).
 *
 * @example
 * ```ts
 * byScore([{ id: 'a', content: '', score: 0.2 }, { id: 'b', content: '', score: 0.9 }])[0].id; // 'b'
 * ```
 */
export function byScore<T extends { readonly score: number }>(items: readonly T[]): T[] {
  return items
    .map((item, index) => ({ item, index }))
    .sort((a, b) => b.item.score - a.item.score || a.index - b.index)
    .map((x) => x.item);
}

/**
 * The comparable core of an answer: the text after a last "answer is"/"answer:" if any,
 * lower-cased, without surrounding quotes, markdown emphasis and final punctuation, with
 * whitespace collapsed. `"The answer is **42**."` and `"42"` normalise alike.
 *
 * @example
 * ```ts
 * normalizeAnswer('Final answer: Paris.'); // 'paris'
 * ```
 */
export function normalizeAnswer(text: string): string {
  const marker = /answer\s*(?:is|:)\s*/gi;
  let start = 0;
  for (let m = marker.exec(text); m !== null; m = marker.exec(text)) start = m.index + m[0].length;
  return text
    .slice(start)
    .replace(/[*_`]/g, '')
    .replace(/\s+/g, ' ')
    .replace(/^[\s"'“”‘’]+|[\s"'“”‘’.!?。]+$/g, '')
    .toLowerCase();
}

/**
 * Shorten text for a decision's `detail`.
 *
 * @example
 * ```ts
 * clip('a very long answer …', 10); // 'a very lo…'
 * ```
 */
export function clip(text: string, max = 60): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}

/**
 * Options given to `init` override the ones the strategy was created with, except functions:
 * those cannot travel in the persistable state, so they must be given to the factory.
 *
 * @example
 * ```ts
 * const o = mergeOptions('tree', configured, given, ['scorer']);
 * ```
 */
export function mergeOptions<T extends object>(name: string, configured: T, given: T | undefined, functionKeys: readonly (keyof T & string)[]): T {
  if (given === undefined || given === configured) return configured;
  for (const key of functionKeys) {
    if (given[key] !== undefined && given[key] !== configured[key]) {
      throw new ConfigurationError(
        `strategies.${name}: the option \`${key}\` (it holds functions) must be given when creating the strategy (strategies.${name}({ ${key} })), not in runStrategy's \`options\`: functions cannot be persisted with the strategy's state.`,
      );
    }
  }
  return { ...configured, ...given };
}

/**
 * A positive whole number option, or its default; anything else is a configuration error.
 *
 * @example
 * ```ts
 * count('tree', 'breadth', options.breadth, 3); // 3 when unset
 * ```
 */
export function count(name: string, key: string, value: number | undefined, fallback: number, min = 1): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < min) {
    throw new ConfigurationError(`strategies.${name}: \`${key}\` must be a whole number ≥ ${min} (got ${String(value)}).`);
  }
  return value;
}

/**
 * The ancestor contents of a node, root first, from a map of nodes by id.
 *
 * @example
 * ```ts
 * lineage({ a: { content: 'x' }, b: { content: 'y', parentId: 'a' } }, 'b'); // ['x', 'y']
 * ```
 */
export function lineage(nodes: Readonly<Record<string, { readonly content: string; readonly parentId?: string }>>, id: string | undefined): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (let at = id; at !== undefined && !seen.has(at); ) {
    seen.add(at);
    const node = Object.hasOwn(nodes, at) ? nodes[at] : undefined;
    if (node === undefined) break;
    out.unshift(node.content);
    at = node.parentId;
  }
  return out;
}
