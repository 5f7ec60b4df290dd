/**
 * The public shape of the agent system: options, the system, and one agent in it.
 */
import type { Actor, ActorRefFrom, InspectionEvent, Observer } from 'xstate';
import type { Observable } from 'rxjs';
import type { AgentHostMachine, AgentSystemMachine } from '../../machines/agentHost.machine.ts';
import type { Agent, AgentConfig } from '../agent/createAgent.ts';
import type { AgentRuntime } from '../agent/types.ts';
import type { LoopResult } from '../core/run.ts';
import type { JournalEntry } from '../core/loopEvent.ts';
import type { Tool } from '../tools/types.ts';

/**
 * @example
 * ```ts
 * const system = createAgentSystem({ inspect: (e) => console.log(e.type) });
 * ```
 */
export interface AgentSystemOptions {
  /**
   * XState inspection of the system's actors (root, hosts, tasks); also given to agents spawned
   * from a config that has no `observe.inspect` of its own, so their runs show up too.
   */
  readonly inspect?: Observer<InspectionEvent> | ((event: InspectionEvent) => void);
  /**
   * Where the runs of agents spawned from a config execute (see `createPostgresRuntime`): each
   * task is then a durable run that any worker advances. A config's own `runtime` wins.
   */
  readonly runtime?: AgentRuntime;
}

/**
 * @example
 * ```ts
 * system.spawn('critic', config, { parent: 'writer', concurrency: 2 });
 * ```
 */
export interface SpawnOptions {
  /** A live agent this one belongs to: stopping the parent stops it too. */
  readonly parent?: string;
  /** Tasks run at once. Default 1: messages are handled one after another, in order. */
  readonly concurrency?: number;
}

/**
 * @example
 * ```ts
 * system.tell('writer', 'Draft the intro', { from: 'planner' });
 * ```
 */
export interface TellOptions {
  /** The sending agent's id (it must be live). Default: `user`, code outside the system. */
  readonly from?: string;
}

/**
 * @example
 * ```ts
 * await system.ask('writer', 'Draft the intro', { timeoutMs: 60_000, signal: controller.signal });
 * ```
 */
export interface AskOptions extends TellOptions {
  /** Time to wait for the answer, queueing included, in ms. Default: the loop's wall-clock limit (5 min). */
  readonly timeoutMs?: number;
  /** Aborting it cancels the asked task (and its run) and rejects with the signal's reason. */
  readonly signal?: AbortSignal;
}

/**
 * What `tell` hands back: ids to find the task's run and messages in the journals.
 *
 * @example
 * ```ts
 * const { runId } = system.tell('writer', 'Draft the intro');
 * system.get('writer').agent.journal.entries(runId);
 * ```
 */
export interface MessageReceipt {
  readonly correlationId: string;
  readonly runId: string;
}

/**
 * @example
 * ```ts
 * const toResearcher = system.delegateTool('researcher', { description: 'Find sources for a claim.' });
 * ```
 */
export interface DelegateToolOptions {
  /** Tool name. Default `delegate_to_<id>` (characters the model may not use become `_`). */
  readonly name?: string;
  /** What the model reads to decide when to delegate. Default: a generic hand-off description. */
  readonly description?: string;
  /** Ask timeout for each delegation (also the tool's executor timeout). Default: 5 min. */
  readonly timeoutMs?: number;
}

/**
 * One agent of a system.
 *
 * @example
 * ```ts
 * const writer = system.spawn('writer', { model, system: 'You write.' });
 * const result = await writer.ask('Draft the intro');
 * writer.actor.getSnapshot().context.queue.length; // messages waiting
 * ```
 */
export interface SystemAgent {
  readonly id: string;
  readonly parent: string | undefined;
  readonly agent: Agent;
  /** The agent's host actor (its mailbox) in the system; also `system.actor.system.get(id)`. */
  readonly actor: ActorRefFrom<AgentHostMachine>;
  /** Ids of the live agents spawned with this one as parent. */
  children(): string[];
  tell(message: string, options?: TellOptions): MessageReceipt;
  ask(message: string, options?: AskOptions): Promise<LoopResult>;
  /** Stop this agent and its descendants. */
  stop(): void;
}

/**
 * Agents as actors of one XState system: addressable by id, messaging each other, delegating
 * through tools, stopped with their children, observed through one stream.
 *
 * @example
 * ```ts
 * const system = createAgentSystem();
 * system.spawn('researcher', { model, system: 'You research.' });
 * system.spawn('writer', { model, tools: [system.delegateTool('researcher')] });
 * system.events$.subscribe((e) => console.log(e.agentId, e.event.type));
 * const result = await system.ask('writer', 'Write a paragraph on actors, with a source.');
 * system.stopAll();
 * ```
 */
export interface AgentSystem {
  /** The root actor. `actor.system.get(id)` is the host actor of agent `id`. */
  readonly actor: Actor<AgentSystemMachine>;
  /** Every journal entry of every agent (with its `agentId`), plus `agent.message` entries. */
  readonly events$: Observable<JournalEntry>;
  /**
   * Add an agent, from a config (created with `id`) or an existing Agent (whose id must be `id`).
   * Throws ConfigurationError for a taken or malformed id, AgentSystemError (agent_not_found) for an unknown parent.
   */
  spawn(id: string, agent: AgentConfig | Agent, options?: SpawnOptions): SystemAgent;
  /** The live agent `id`; throws AgentSystemError (agent_not_found). */
  get(id: string): SystemAgent;
  has(id: string): boolean;
  /** Live agents, in spawn order. */
  list(): SystemAgent[];
  /** Queue `message` as a task of agent `to`; does not wait for it. */
  tell(to: string, message: string, options?: TellOptions): MessageReceipt;
  /**
   * Queue `message` as a task of agent `to` and wait for its result. Rejects with the run's typed
   * error when it fails, AgentSystemError (ask_timeout) after `timeoutMs` (the task is cancelled),
   * AgentSystemError (agent_stopped) when the agent is stopped first.
   */
  ask(to: string, message: string, options?: AskOptions): Promise<LoopResult>;
  /** A tool `{ task }` that asks agent `to` and returns its answer text as the observation. */
  delegateTool(to: string, options?: DelegateToolOptions): Tool<{ task: string }, string>;
  /**
   * Stop agent `id` and all its descendants, synchronously: their host and task actors stop, the
   * runs the system started for them end `cancelled`, asks to them reject with AgentSystemError (agent_stopped).
   * Then (once those runs have settled) `Agent#stop()` cancels runs started outside the system.
   */
  stop(id: string): void;
  /** Stop every agent and the root actor; `events$` completes. The system cannot be used after. */
  stopAll(): void;
}
