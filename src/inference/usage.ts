/** Prices are data the user can replace: list prices change and every gateway charges its own. */
import type { Completion, Usage } from '../core/provider.ts';
import { ZERO_USAGE, addUsage } from '../core/provider.ts';

/** USD per one million tokens. */
export interface ModelPrice {
  readonly promptPerMillion: number;
  readonly completionPerMillion: number;
  /** The prompt price when absent. */
  readonly cacheReadPerMillion?: number;
  /** The 5-minute cache; the prompt price when absent. */
  readonly cacheWritePerMillion?: number;
}

export type PriceTable = Readonly<Record<string, ModelPrice>>;

/** List prices (standard tier) at the time of writing, for a few common models. */
export const DEFAULT_PRICES: PriceTable = Object.freeze({
  // OpenAI: input, output, cached input (reported in prompt_tokens_details.cached_tokens).
  'gpt-4o': { promptPerMillion: 2.5, completionPerMillion: 10, cacheReadPerMillion: 1.25 },
  'gpt-4o-mini': { promptPerMillion: 0.15, completionPerMillion: 0.6, cacheReadPerMillion: 0.075 },
  'gpt-4.1': { promptPerMillion: 2, completionPerMillion: 8, cacheReadPerMillion: 0.5 },
  'gpt-4.1-mini': { promptPerMillion: 0.4, completionPerMillion: 1.6, cacheReadPerMillion: 0.1 },
  'gpt-4.1-nano': { promptPerMillion: 0.1, completionPerMillion: 0.4, cacheReadPerMillion: 0.025 },
  'o4-mini': { promptPerMillion: 1.1, completionPerMillion: 4.4, cacheReadPerMillion: 0.275 },
  // Claude: input, output, cache read. Haiku 5.5 bills prompts over 100k tokens at a higher tier
  // that a per-model entry cannot express.
  'claude-fable-5-1': claude(10, 50, 0.25),
  'claude-fable-5': claude(10, 50, 1),
  'claude-opus-5-5': claude(4, 20, 0.2),
  'claude-opus-5': claude(5, 25, 0.5),
  'claude-opus-4-8': claude(5, 25, 0.5),
  'claude-opus-4-7': claude(5, 25, 0.5),
  'claude-opus-4-6': claude(5, 25, 0.5),
  'claude-opus-4-5': claude(5, 25, 0.5),
  'claude-sonnet-5-5': claude(2, 10, 0.1),
  'claude-sonnet-5': claude(2, 10, 0.2),
  'claude-sonnet-4-6': claude(3, 15, 0.3),
  'claude-sonnet-4-5': claude(3, 15, 0.3),
  'claude-sonnet-4': claude(3, 15, 0.3),
  'claude-haiku-5-5': claude(0.1, 0.5, 0.01),
  'claude-haiku-4-5': claude(1, 5, 0.1),
});

/** Anthropic bills 5-minute cache writes at 1.25× the input price. */
function claude(promptPerMillion: number, completionPerMillion: number, cacheReadPerMillion: number): ModelPrice {
  return { promptPerMillion, completionPerMillion, cacheReadPerMillion, cacheWritePerMillion: promptPerMillion * 1.25 };
}

/** Tries the id without a gateway prefix, then without a date suffix (what providers report back). Own keys only. */
export function priceOf(model: string, table: PriceTable = DEFAULT_PRICES): ModelPrice | undefined {
  const bare = model.includes('/') ? model.slice(model.lastIndexOf('/') + 1) : model;
  for (const candidate of [model, bare, bare.replace(/-\d{4}-\d{2}-\d{2}$/, ''), bare.replace(/-\d{8}$/, '')]) {
    if (Object.hasOwn(table, candidate)) return table[candidate];
  }
  return undefined;
}

export function costOf(model: string, usage: Usage, table: PriceTable = DEFAULT_PRICES): number | undefined {
  const price = priceOf(model, table);
  if (price === undefined) return undefined;
  const cacheRead = usage.cacheReadTokens ?? 0;
  const cacheWrite = usage.cacheWriteTokens ?? 0;
  const uncached = Math.max(0, usage.promptTokens - cacheRead - cacheWrite);
  return (
    (uncached * price.promptPerMillion +
      cacheRead * (price.cacheReadPerMillion ?? price.promptPerMillion) +
      cacheWrite * (price.cacheWritePerMillion ?? price.promptPerMillion) +
      usage.completionTokens * price.completionPerMillion) /
    1_000_000
  );
}

export class UsageTracker {
  #total: Usage = ZERO_USAGE;
  #costUsd = 0;
  #calls = 0;
  #unpricedCalls = 0;

  add(completion: Pick<Completion, 'usage' | 'costUsd'>): void {
    this.#total = addUsage(this.#total, completion.usage);
    this.#calls++;
    if (completion.costUsd === undefined) this.#unpricedCalls++;
    else this.#costUsd += completion.costUsd;
  }

  get total(): Usage {
    return this.#total;
  }

  /** A lower bound when `unpricedCalls > 0`. */
  get costUsd(): number {
    return this.#costUsd;
  }

  get calls(): number {
    return this.#calls;
  }

  get unpricedCalls(): number {
    return this.#unpricedCalls;
  }

  toJSON(): { total: Usage; costUsd: number; calls: number; unpricedCalls: number } {
    return { total: this.#total, costUsd: this.#costUsd, calls: this.#calls, unpricedCalls: this.#unpricedCalls };
  }
}
