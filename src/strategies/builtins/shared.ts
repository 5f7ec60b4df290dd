import { ConfigurationError } from '../../core/errors.ts';
import type { StrategyContext, Thought } from '../../core/strategy.ts';

/** Higher is better; the built-ins' model scorer returns 0–1. */
export type Scorer = (thought: Thought, context: StrategyContext) => number | Promise<number>;

export type ScoredThought = Thought & { readonly score: number };

export function usable(thought: Thought): boolean {
  return thought.metadata?.error === undefined && thought.content.trim() !== '';
}

export function firstNumber(text: string): number | undefined {
  const match = /-?\d+(?:\.\d+)?/.exec(text);
  return match === null ? undefined : Number(match[0]);
}

export async function modelScore(thought: Thought, context: StrategyContext): Promise<number> {
  const reply = await context.complete(
    `Task:\n${context.task}\n\nCandidate:\n${thought.content}\n\n` +
      'Rate from 0 to 10 how likely this candidate is correct and leads to a complete answer to the task. Reply with the number only.',
    { temperature: 0 },
  );
  const value = firstNumber(reply);
  return value === undefined ? 0 : Math.min(10, Math.max(0, value)) / 10;
}

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

/** Ties keep their original order: the earlier branch wins. */
export function byScore<T extends { readonly score: number }>(items: readonly T[]): T[] {
  return items
    .map((item, index) => ({ item, index }))
    .sort((a, b) => b.item.score - a.item.score || a.index - b.index)
    .map((x) => x.item);
}

/** `"The answer is **42**."` and `"42"` normalise alike. */
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

export function clip(text: string, max = 60): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}

/** Functions cannot travel in the persistable state, so those options must be given to the factory, not `init`. */
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

export function count(name: string, key: string, value: number | undefined, fallback: number, min = 1): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < min) {
    throw new ConfigurationError(`strategies.${name}: \`${key}\` must be a whole number ≥ ${min} (got ${String(value)}).`);
  }
  return value;
}

/** Ancestor contents, root first. */
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
