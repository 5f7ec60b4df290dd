import type { Actor, ActorRefFrom, InspectionEvent, Observer } from 'xstate';
import type { Observable } from 'rxjs';
import type { AgentHostMachine, AgentSystemMachine } from '../../machines/agentHost.machine.ts';
import type { Agent, AgentConfig } from '../agent/createAgent.ts';
import type { AgentRuntime } from '../agent/types.ts';
import type { LoopResult } from '../core/run.ts';
import type { JournalEntry } from '../core/loopEvent.ts';
import type { Tool } from '../tools/types.ts';

export interface AgentSystemOptions {
  /** Also given to agents spawned from a config without its own `observe.inspect`, so their runs show up too. */
  readonly inspect?: Observer<InspectionEvent> | ((event: InspectionEvent) => void);
  /** Where runs of agents spawned from a config execute; a config's own `runtime` wins. */
  readonly runtime?: AgentRuntime;
}

export interface SpawnOptions {
  /** Stopping the parent stops this agent too. */
  readonly parent?: string;
  readonly concurrency?: number;
}

export interface TellOptions {
  /** The sending agent's id (it must be live). Default: `user`, code outside the system. */
  readonly from?: string;
}

export interface AskOptions extends TellOptions {
  readonly timeoutMs?: number;
  /** Aborting it cancels the asked task (and its run) and rejects with the signal's reason. */
  readonly signal?: AbortSignal;
}

export interface MessageReceipt {
  readonly correlationId: string;
  readonly runId: string;
}

export interface DelegateToolOptions {
  readonly name?: string;
  readonly description?: string;
  /** Also the tool's executor timeout. */
  readonly timeoutMs?: number;
}

export interface SystemAgent {
  readonly id: string;
  readonly parent: string | undefined;
  readonly agent: Agent;
  /** The agent's host actor (its mailbox); also `system.actor.system.get(id)`. */
  readonly actor: ActorRefFrom<AgentHostMachine>;
  children(): string[];
  tell(message: string, options?: TellOptions): MessageReceipt;
  ask(message: string, options?: AskOptions): Promise<LoopResult>;
  stop(): void;
}

export interface AgentSystem {
  readonly actor: Actor<AgentSystemMachine>;
  /** Every journal entry of every agent, plus `agent.message` entries. */
  readonly events$: Observable<JournalEntry>;
  spawn(id: string, agent: AgentConfig | Agent, options?: SpawnOptions): SystemAgent;
  get(id: string): SystemAgent;
  has(id: string): boolean;
  list(): SystemAgent[];
  tell(to: string, message: string, options?: TellOptions): MessageReceipt;
  /** Rejects with the run's typed error, AgentSystemError (`ask_timeout`) (the task is cancelled) or AgentSystemError (`agent_stopped`). */
  ask(to: string, message: string, options?: AskOptions): Promise<LoopResult>;
  delegateTool(to: string, options?: DelegateToolOptions): Tool<{ task: string }, string>;
  /** Synchronous for the system's own runs; runs started outside it are cancelled once those settled. */
  stop(id: string): void;
  stopAll(): void;
}
