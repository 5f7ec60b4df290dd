/** What the runtime, its steps and the calls its workers make share in one process. */
import type pg from 'pg';
import type { AgentBinding } from '../agent/types.ts';
import type { InferenceProvider } from '../core/provider.ts';
import type { Tool } from '../tools/types.ts';
import type { DurableStrategyDefinition } from './types.ts';
import type { StepStore } from './stepStore.ts';

/** What a worker's calls need of an agent or strategy: its model, its tools (outside a step they call straight through), and its secret rules. */
export interface Caller {
  readonly agentId: string;
  readonly provider: InferenceProvider;
  /** A tool by name, once it is known here (an MCP server's may not be, until it is looked up). */
  tool(name: string): Promise<Tool | undefined>;
  readonly redact: <T>(value: T) => T;
}

/** An agent created with the runtime in this process. */
export interface BoundAgent extends Caller {
  readonly start: AgentBinding['start'];
  readonly resume: AgentBinding['resume'];
}

/** A strategy defined with the runtime in this process (`runtime.strategy`). */
export interface BoundStrategy extends Caller {
  readonly definition: DurableStrategyDefinition;
}

export interface Engine {
  readonly pool: pg.Pool;
  readonly agents: Map<string, BoundAgent>;
  readonly strategies: Map<string, BoundStrategy>;
  readonly store: StepStore;
  /** Resolves once the schema is checked (or migrated). */
  ready(): Promise<void>;
}

/** The graphile-worker task that advances a run: one pending job per run at most (its job key), whatever woke it. */
export const WAKE_TASK = 'actorloop_wake';
/** The channel steps notify on: `{ actor, agent, status, from, to }`. */
export const CHANNEL = 'actorloop';

/** The agent or strategy whose calls these are. */
export const callerOf = (engine: Engine, id: string): Caller | undefined => engine.agents.get(id) ?? engine.strategies.get(id);
