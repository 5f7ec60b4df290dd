interface CacheEntry {
  readonly content: string;
  readonly at: number;
}

export class ResultCache {
  readonly #entries = new Map<string, CacheEntry>();
  constructor(readonly capacity = 256) {}

  static key(tool: string, args: unknown): string {
    return `${tool}\u0000${stableStringify(args)}`;
  }

  set(key: string, content: string, at: number): void {
    this.#entries.delete(key);
    this.#entries.set(key, { content, at });
    if (this.#entries.size > this.capacity) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
  }

  get(key: string, now: number, maxAgeMs: number): CacheEntry | undefined {
    const entry = this.#entries.get(key);
    return entry !== undefined && now - entry.at <= maxAgeMs ? entry : undefined;
  }

  get size(): number {
    return this.#entries.size;
  }
}

export interface DeadLetter {
  readonly runId: string;
  readonly agentId: string;
  readonly toolCallId: string;
  readonly tool: string;
  readonly arguments: unknown;
  readonly error: string;
  readonly at: number;
}

export class DeadLetterQueue {
  readonly #items: DeadLetter[] = [];
  #dropped = 0;
  constructor(readonly capacity = 1_000) {}

  add(item: DeadLetter): void {
    this.#items.push(item);
    if (this.#items.length > this.capacity) {
      this.#items.shift();
      this.#dropped++;
    }
  }

  list(): DeadLetter[] {
    return this.#items.slice();
  }

  get dropped(): number {
    return this.#dropped;
  }
}

function stableStringify(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
    // A null prototype: a `__proto__` key stays a plain key.
    const sorted = Object.create(null) as Record<string, unknown>;
    for (const k of Object.keys(v).sort()) sorted[k] = (v as Record<string, unknown>)[k];
    return sorted;
  }) ?? 'undefined';
}
