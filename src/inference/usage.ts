/**
 * Token usage and what it costs. Prices are data the user can replace: list prices change and
 * every gateway (OpenRouter, Azure, a local server) charges its own.
 */
import type { Completion, Usage } from '../core/provider.ts';
import { ZERO_USAGE, addUsage } from '../core/provider.ts';

/** USD per one million tokens. */
export interface ModelPrice {
  readonly promptPerMillion: number;
  readonly completionPerMillion: number;
  /** Input tokens read from the prompt cache; the prompt price when absent. */
  readonly cacheReadPerMillion?: number;
  /** Input tokens written to the prompt cache (5-minute cache); the prompt price when absent. */
  readonly cacheWritePerMillion?: number;
}

/** Prices by model id (`gpt-4o-mini`, or a gateway id such as `openai/gpt-4o-mini`). */
export type PriceTable = Readonly<Record<string, ModelPrice>>;

/**
 * OpenAI and Anthropic list prices (standard tier, USD per 1M tokens) at the time of writing, for
 * a few common models; Claude entries carry their prompt-cache read and write prices. Pass
 * `prices` to the provider to add or correct entries.
 *
 * @example
 * ```ts
 * DEFAULT_PRICES['gpt-4o-mini']; // { promptPerMillion: 0.15, completionPerMillion: 0.6 }
 * ```
 */
export const DEFAULT_PRICES: PriceTable = Object.freeze({
  'gpt-4o': { promptPerMillion: 2.5, completionPerMillion: 10 },
  'gpt-4o-mini': { promptPerMillion: 0.15, completionPerMillion: 0.6 },
  'gpt-4.1': { promptPerMillion: 2, completionPerMillion: 8 },
  'gpt-4.1-mini': { promptPerMillion: 0.4, completionPerMillion: 1.6 },
  'gpt-4.1-nano': { promptPerMillion: 0.1, completionPerMillion: 0.4 },
  'o4-mini': { promptPerMillion: 1.1, completionPerMillion: 4.4 },
  // Claude: input, output, cache read; a 5-minute cache write is 1.25× input. Haiku 5.5 bills
  // prompts over 100k tokens at a higher tier that a per-model entry cannot express.
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

/** A Claude price: Anthropic bills 5-minute cache writes at 1.25× the input price. */
function claude(promptPerMillion: number, completionPerMillion: number, cacheReadPerMillion: number): ModelPrice {
  return { promptPerMillion, completionPerMillion, cacheReadPerMillion, cacheWritePerMillion: promptPerMillion * 1.25 };
}

/**
 * The price entry for a model: the exact id, else the id without a gateway prefix
 * (`openai/gpt-4o` → `gpt-4o`), else without a date suffix (`gpt-4o-mini-2024-07-18`, which is
 * what OpenAI reports back for `gpt-4o-mini`; `claude-sonnet-4-5-20250929`, Anthropic's form).
 * Own keys only: `__proto__` finds nothing.
 *
 * @example
 * ```ts
 * priceOf('openai/gpt-4o-mini-2024-07-18', DEFAULT_PRICES); // the gpt-4o-mini entry
 * ```
 */
export function priceOf(model: string, table: PriceTable = DEFAULT_PRICES): ModelPrice | undefined {
  const bare = model.includes('/') ? model.slice(model.lastIndexOf('/') + 1) : model;
  for (const candidate of [model, bare, bare.replace(/-\d{4}-\d{2}-\d{2}$/, ''), bare.replace(/-\d{8}$/, '')]) {
    if (Object.hasOwn(table, candidate)) return table[candidate];
  }
  return undefined;
}

/**
 * Cost of one call in USD, or `undefined` when the model has no price.
 *
 * @example
 * ```ts
 * costOf('gpt-4o-mini', { promptTokens: 1_000_000, completionTokens: 0, totalTokens: 1_000_000 }); // 0.15
 * ```
 */
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

/**
 * Accumulates usage and cost across calls (a run, a session, a budget).
 *
 * @example
 * ```ts
 * const tracker = new UsageTracker();
 * tracker.add(await model.complete({ messages }));
 * console.log(tracker.total.totalTokens, tracker.costUsd.toFixed(4));
 * ```
 */
export class UsageTracker {
  #total: Usage = ZERO_USAGE;
  #costUsd = 0;
  #calls = 0;
  #unpricedCalls = 0;

  /** Count one completed call. */
  add(completion: Pick<Completion, 'usage' | 'costUsd'>): void {
    this.#total = addUsage(this.#total, completion.usage);
    this.#calls++;
    if (completion.costUsd === undefined) this.#unpricedCalls++;
    else this.#costUsd += completion.costUsd;
  }

  /** Tokens summed over every call added. */
  get total(): Usage {
    return this.#total;
  }

  /** USD summed over the priced calls; a lower bound when `unpricedCalls > 0`. */
  get costUsd(): number {
    return this.#costUsd;
  }

  get calls(): number {
    return this.#calls;
  }

  /** Calls whose model had no price: their tokens count in `total` but not in `costUsd`. */
  get unpricedCalls(): number {
    return this.#unpricedCalls;
  }

  toJSON(): { total: Usage; costUsd: number; calls: number; unpricedCalls: number } {
    return { total: this.#total, costUsd: this.#costUsd, calls: this.#calls, unpricedCalls: this.#unpricedCalls };
  }
}
