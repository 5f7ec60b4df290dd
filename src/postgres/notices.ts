import type pg from 'pg';
import { TOKEN_CHANNEL, TOKEN_LOCK } from './tokens.ts';

/** What a step tells listeners on the runtime's channel: which run moved, to what status, and which log rows it added. */
export interface StepNotice {
  readonly actor: string;
  readonly agent: string;
  readonly status: string;
  /** Log rows `from` (included) to `to` (excluded) are new. */
  readonly from: number;
  readonly to: number;
}

export const stepNotice = (notice: StepNotice): string => JSON.stringify(notice);

/** Undefined for a payload that is not a step's notice (the channel is the database's: anyone may send on it). */
export function parseStepNotice(payload: string | undefined): StepNotice | undefined {
  try {
    const value = JSON.parse(payload ?? '') as Partial<StepNotice>;
    return typeof value.actor === 'string' && typeof value.agent === 'string' && typeof value.status === 'string' ? (value as StepNotice) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * With the agent's id hashed, the advisory lock a process holds shared while it reads the agent's steps from
 * their notices: a step that leaves its run's status as it was notifies only when it cannot take the lock alone.
 */
export const FOLLOW_LOCK = 0x61_6c_73_74;

/**
 * The agents this process follows, as advisory locks held shared on its listening connection: the step lock
 * (steps notify it) and the token lock (workers publish streamed calls to it). Taken while an agent has
 * subscribers here and let go after the last leaves, one change at a time, in order.
 */
export class AgentFollows {
  #client: pg.ClientBase | undefined;
  #held = new Set<string>();
  readonly #subscribers = new Map<string, number>();
  #done: Promise<void> = Promise.resolve();

  /** One subscriber more (1) or fewer (-1) of the agent's entries. */
  count(agentId: string, change: 1 | -1): void {
    const left = (this.#subscribers.get(agentId) ?? 0) + change;
    if (left > 0) this.#subscribers.set(agentId, left);
    else this.#subscribers.delete(agentId);
  }

  follows(agentId: string): boolean {
    return this.#subscribers.has(agentId);
  }

  get agents(): string[] {
    return [...this.#subscribers.keys()];
  }

  /** The agent's locks on `client` as its subscribers want them; resolves once so, after every change asked before. */
  sync(client: pg.ClientBase, agentId: string): Promise<void> {
    if (this.#client !== client) {
      this.#client = client;
      this.#held = new Set();
    }
    const held = this.#held;
    const next = this.#done.then(async () => {
      const wanted = this.#subscribers.has(agentId);
      if (this.#client !== client || wanted === held.has(agentId)) return;
      if (wanted) {
        if (held.size === 0) await client.query(`LISTEN ${TOKEN_CHANNEL}`);
        held.add(agentId);
        // Granted once no step that could have missed this follower is still uncommitted.
        await client.query('SELECT pg_advisory_lock_shared($1, hashtext($3)), pg_advisory_lock_shared($2, hashtext($3))', [FOLLOW_LOCK, TOKEN_LOCK, agentId]);
      } else {
        held.delete(agentId);
        await client.query('SELECT pg_advisory_unlock_shared($1, hashtext($3)), pg_advisory_unlock_shared($2, hashtext($3))', [FOLLOW_LOCK, TOKEN_LOCK, agentId]);
        // PostgreSQL wakes every listening connection at each notice: one that follows nothing stops listening.
        if (held.size === 0) await client.query(`UNLISTEN ${TOKEN_CHANNEL}`);
      }
    });
    this.#done = next.catch(() => undefined);
    return next;
  }
}

export const FOLLOW_LINGER_MS = 30_000;

/** Agents nobody here follows any more, each let go once it has been so for `ms` (one timer an agent). */
export class Lingering {
  readonly #timers = new Map<string, ReturnType<typeof setTimeout>>();

  constructor(
    private readonly ms: number,
    private readonly letGo: (agentId: string) => void,
  ) {}

  add(agentId: string): void {
    clearTimeout(this.#timers.get(agentId));
    const timer = setTimeout(() => {
      this.#timers.delete(agentId);
      this.letGo(agentId);
    }, this.ms);
    timer.unref();
    this.#timers.set(agentId, timer);
  }

  clear(): void {
    for (const timer of this.#timers.values()) clearTimeout(timer);
    this.#timers.clear();
  }
}
