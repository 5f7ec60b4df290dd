/** What the runtime, its steps and its effect jobs share in one process. */
import type pg from 'pg';
import type { Agent } from '../agent/types.ts';
import type { InferenceProvider } from '../core/provider.ts';
import type { Tool } from '../tools/types.ts';
import type { StepContext } from './durable.ts';
import type { StepStore } from './stepStore.ts';

/** An agent created with the runtime in this process: what its steps and effects need. */
export interface BoundAgent {
  readonly agentId: string;
  /** The model and tools themselves (not wrapped): what effect jobs call. */
  readonly provider: InferenceProvider;
  readonly tools: ReadonlyMap<string, Tool>;
  readonly redact: <T>(value: T) => T;
  readonly agent: () => Agent;
}

export interface Engine {
  readonly pool: pg.Pool;
  readonly agents: Map<string, BoundAgent>;
  readonly store: StepStore;
  /** The step each run being advanced in this process is in. */
  readonly steps: Map<string, StepContext>;
  /** Resolves once the schema is checked (or migrated). */
  ready(): Promise<void>;
}

/** graphile-worker task names and the queue of an actor. */
export const STEP_TASK = 'actorloop_step';
export const EFFECT_TASK = 'actorloop_effect';
export const queueOf = (actorId: string): string => `actor:${actorId}`;
/** The channel steps notify on: `{ actor, agent, status, from, to }`. */
export const CHANNEL = 'actorloop';
