import type pg from 'pg';
import type { AgentBinding } from '../agent/types.ts';
import type { InferenceProvider, StructuredOutputSpec } from '../core/provider.ts';
import type { Tool } from '../tools/types.ts';
import type { StreamRedactor } from '../security/streamRedactor.ts';
import type { DurableStrategyDefinition } from './types.ts';
import type { StepStore } from './stepStore.ts';
import type { HeldBlobs, MediaLimits } from './blobs.ts';
import type { AgentDefinition } from './definition.ts';

/** Outside a step its tools call straight through. */
export interface Caller {
  readonly agentId: string;
  readonly provider: InferenceProvider;
  /** An MCP server's tool may not be known until it is looked up. */
  tool(name: string): Promise<Tool | undefined>;
  readonly redact: <T>(value: T) => T;
  readonly redactCopy: AgentBinding['redactCopy'];
  /** The agent's output schema, for model calls whose reply must match it. */
  readonly output?: StructuredOutputSpec;
  /** Its model takes images: the images its tools return are kept, within these limits. */
  readonly images?: MediaLimits;
  /** For a streamed reply's deltas. */
  readonly redactStream: () => StreamRedactor;
}

export interface BoundAgent extends Caller {
  /** What the runs queued in this process expect of the worker's agent. */
  readonly definition: AgentDefinition;
  readonly start: AgentBinding['start'];
  readonly resume: AgentBinding['resume'];
}

export interface BoundStrategy extends Caller {
  readonly definition: DurableStrategyDefinition;
}

export interface Engine {
  readonly pool: pg.Pool;
  readonly agents: Map<string, BoundAgent>;
  readonly strategies: Map<string, BoundStrategy>;
  readonly store: StepStore;
  readonly blobs: HeldBlobs;
  ready(): Promise<void>;
}

/** One pending job per run at most (its job key), whatever woke it. */
export const WAKE_TASK = 'actorloop_wake';
/** Payload: `{ actor, agent, status, from, to }`. */
export const CHANNEL = 'actorloop';

export const callerOf = (engine: Engine, id: string): Caller | undefined => engine.agents.get(id) ?? engine.strategies.get(id);
