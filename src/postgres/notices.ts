import type pg from 'pg';

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

/** The agents a listening connection follows: each one's lock is taken once, and held while the connection lives. */
export class StepFollows {
  #client: pg.ClientBase | undefined;
  #agents = new Map<string, Promise<void>>();

  /** Resolves once the lock is granted: no step that could have missed this follower is still uncommitted then. */
  follow(client: pg.ClientBase, agentId: string): Promise<void> {
    if (this.#client !== client) {
      this.#client = client;
      this.#agents = new Map();
    }
    const locked = this.#agents.get(agentId) ?? client.query('SELECT pg_advisory_lock_shared($1, hashtext($2))', [FOLLOW_LOCK, agentId]).then(() => undefined);
    this.#agents.set(agentId, locked);
    return locked;
  }
}
