/**
 * The agent system as two pure statecharts:
 *
 * - `agentHostMachine`, one per agent: its mailbox. It receives `agent.tell` / `agent.ask`,
 *   queues them and runs each as a task of its agent (at most `concurrency` at once). An ask is a
 *   request whose task id is its correlation id and whose `replyTo` is the asker's actor: when
 *   the task ends the host sends it `agent.reply` (done, failed, timed out or cancelled). An ask
 *   carries a deadline: a delayed `task.timeout` stops the task's actor, and with it the run.
 * - `agentSystemMachine`, the root: it spawns one host per agent with `systemId` = the agent id
 *   (so `actor.system.get(id)` finds it), keeps the parent/child tree, and stops an agent together
 *   with all its descendants.
 *
 * Any actor of the system sends a message as itself with `agent.send` (it looks the target host
 * up by systemId), and takes replies as `agent.reply`, reporting them with `reply.received`: the
 * root for code outside the system, a host for its agent's delegations.
 *
 * Pure: a task is the actor `runTask`, registered by name and provided by the runtime
 * (`src/system/`, a `subAgentMachine` whose agent loop runs as its child). Stopping a host stops
 * its tasks and their runs.
 *
 * @example
 * ```ts
 * const host = agentHostMachine.provide({ actors: { runTask } });
 * const root = createActor(agentSystemMachine.provide({ actors: { agentHost: host } }), { inspect });
 * root.start();
 * root.send({ type: 'system.spawn', id: 'writer', concurrency: 1 });
 * root.send({ type: 'agent.send', to: 'writer', message: { type: 'agent.tell', task } });
 * ```
 */
import { emit, enqueueActions, setup, type AnyActorLogic, type AnyActorRef, type DoneActorEvent, type ErrorActorEvent, type EventObject } from 'xstate';
import { notProvided } from './notProvided.ts';
import type { LoopResult } from '../src/core/run.ts';

/** How a task reached the agent. `ask` and `delegate` expect an answer; `tell` does not. */
export type HostTaskKind = 'tell' | 'ask' | 'delegate';

/** One message for an agent, run as one task (one run of the agent loop). */
export interface HostTask {
  /** Unique per message; doubles as the correlation id of request and reply. */
  readonly taskId: string;
  /** The run id the task's run gets, fixed up front so messages can name it before it starts. */
  readonly runId: string;
  readonly kind: HostTaskKind;
  /** The sender's agent id (or `user` for code outside the system). */
  readonly from: string;
  /** The task text. */
  readonly message: string;
  /** The sender's run, when the message was sent from inside one (a delegation). */
  readonly senderRunId?: string;
  /** Asks only: ms after receipt (queueing included) at which the task is cancelled. */
  readonly timeoutMs?: number;
  /** Asks only: the asker's actor (the system root, or the delegating agent's host); the answer goes there as `agent.reply`. */
  readonly replyTo?: AnyActorRef;
}

export interface RunTaskInput {
  readonly agentId: string;
  readonly task: HostTask;
}

export interface AgentHostInput {
  readonly agentId: string;
  /** Tasks running at once; the rest wait in order. */
  readonly concurrency: number;
}

export interface AgentHostContext {
  readonly agentId: string;
  readonly concurrency: number;
  readonly queue: readonly HostTask[];
  readonly running: readonly HostTask[];
}

/** A message for an agent: a tell, or an ask (a request with a correlation id, `task.taskId`). */
export type AgentMessage =
  | { readonly type: 'agent.tell'; readonly task: HostTask }
  | { readonly type: 'agent.ask'; readonly task: HostTask & { readonly timeoutMs: number } };

/** How a task ended; for an ask it is also the reply. */
export type TaskReport =
  | { readonly type: 'task.done'; readonly task: HostTask; readonly result: LoopResult }
  | { readonly type: 'task.failed'; readonly task: HostTask; readonly error: unknown }
  | { readonly type: 'task.timedOut'; readonly task: HostTask; readonly started: boolean }
  | { readonly type: 'task.cancelled'; readonly task: HostTask; readonly started: boolean; readonly reason?: string };

/** What any actor of the system that sends messages understands: send one on, take a reply. */
export type MessagingEvent =
  /** Send `message` to the agent `to` (its host's systemId), as this actor. */
  | { readonly type: 'agent.send'; readonly to: string; readonly message: AgentMessage }
  /** The answer to an ask this actor sent: `from` is the agent that answered. */
  | { readonly type: 'agent.reply'; readonly from: string; readonly report: TaskReport };

export type AgentHostEvent =
  | AgentMessage
  | MessagingEvent
  | { readonly type: 'agent.cancel'; readonly taskId: string; readonly reason?: string }
  | { readonly type: 'task.timeout'; readonly taskId: string };

/** A reply that reached this actor, for the runtime to settle its ask. */
export type ReplyReceived = { readonly type: 'reply.received'; readonly from: string; readonly report: TaskReport };

/** What a host reports; the runtime listens with `hostRef.on(…)`. */
export type AgentHostEmitted = { readonly type: 'task.started'; readonly task: HostTask } | TaskReport | ReplyReceived;

/** The host a message goes to, found by systemId (the agent id), and the message. */
function delivery(system: { get(id: string): AnyActorRef | undefined }, event: EventObject): { to: AnyActorRef; message: AgentMessage } | undefined {
  if (event.type !== 'agent.send') return undefined;
  const { to, message } = event as Extract<MessagingEvent, { type: 'agent.send' }>;
  const target = system.get(to);
  return target === undefined ? undefined : { to: target, message };
}

/** A reply in, as reported to the runtime (which settles the ask it answers). */
function received(event: EventObject): ReplyReceived {
  const { from, report } = event as Extract<MessagingEvent, { type: 'agent.reply' }>;
  return { type: 'reply.received', from, report };
}

/** The reply to an ask, sent to its asker while the asker is there to take it. */
function replyTo(task: HostTask, from: string, report: TaskReport): { to: AnyActorRef; event: MessagingEvent } | undefined {
  if (task.kind === 'tell' || task.replyTo === undefined || task.replyTo.getSnapshot().status !== 'active') return undefined;
  return { to: task.replyTo, event: { type: 'agent.reply', from, report } };
}

const timerId = (taskId: string): string => `timeout:${taskId}`;

/** Splits a task id out of `list`, or returns undefined when it is not there. */
function without(list: readonly HostTask[], taskId: string): { task: HostTask; rest: HostTask[] } | undefined {
  const at = list.findIndex((t) => t.taskId === taskId);
  if (at < 0) return undefined;
  return { task: list[at] as HostTask, rest: [...list.slice(0, at), ...list.slice(at + 1)] };
}

type TaskOutcome =
  | { readonly taskId: string; readonly ok: true; readonly output: LoopResult }
  | { readonly taskId: string; readonly ok: false; readonly error: unknown };

/** Reads a task actor's done or error event (spawned children's events are not in the typed union). */
function outcomeOf(event: EventObject): TaskOutcome | undefined {
  const actorEvent = event as Partial<DoneActorEvent<LoopResult> & ErrorActorEvent>;
  if (typeof actorEvent.actorId !== 'string') return undefined;
  if (event.type.startsWith('xstate.done.actor.')) return { taskId: actorEvent.actorId, ok: true, output: actorEvent.output as LoopResult };
  return { taskId: actorEvent.actorId, ok: false, error: actorEvent.error };
}

/**
 * One agent's mailbox. Provide `runTask` (run the task's message as a run of the agent, honouring
 * the signal); listen to its reports with `actor.on('*', …)`.
 *
 * @example
 * ```ts
 * const host = createActor(agentHostMachine.provide({ actors: { runTask } }), { input: { agentId: 'w', concurrency: 1 } });
 * host.on('task.done', ({ task, result }) => console.log(task.taskId, result.text));
 * host.start();
 * host.send({ type: 'agent.ask', task: { taskId: 't1', runId: 'r1', kind: 'ask', from: 'user', message: 'Hi', timeoutMs: 5_000 } });
 * ```
 */
export const agentHostMachine = setup({
  types: {
    context: {} as AgentHostContext,
    events: {} as AgentHostEvent,
    input: {} as AgentHostInput,
    emitted: {} as AgentHostEmitted,
  },
  actors: {
    /** A task is a sub-agent run: logic whose output is the task's `LoopResult`; the runtime provides `subAgentMachine`. */
    runTask: notProvided<LoopResult, RunTaskInput>('agentHost', 'runTask') as AnyActorLogic,
  },
  delays: {
    askTimeout: ({ event }) => (event.type === 'agent.ask' ? event.task.timeoutMs : 0),
  },
  guards: {
    isBusy: ({ context }) => context.running.length > 0,
  },
  actions: {
    /** Send a message on to its agent's host: this actor is its sender. */
    deliver: enqueueActions(({ event, system, enqueue }) => {
      const found = delivery(system, event);
      if (found !== undefined) enqueue.sendTo(found.to, found.message);
    }),
    receiveReply: emit(({ event }) => received(event)),
    enqueue: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'agent.tell' && event.type !== 'agent.ask') return;
      enqueue.assign({ queue: [...context.queue, event.task] });
      // The deadline counts from receipt: time spent queued behind other tasks is the asker's too.
      if (event.type === 'agent.ask') enqueue.raise({ type: 'task.timeout', taskId: event.task.taskId }, { id: timerId(event.task.taskId), delay: 'askTimeout' });
    }),
    startTasks: enqueueActions(({ context, enqueue }) => {
      const free = Math.max(0, context.concurrency - context.running.length);
      if (free === 0 || context.queue.length === 0) return;
      const starting = context.queue.slice(0, free);
      enqueue.assign({ queue: context.queue.slice(starting.length), running: [...context.running, ...starting] });
      for (const task of starting) {
        // The child's id is the task id: its done/error events name it, and stopChild finds it.
        enqueue.spawnChild('runTask', { id: task.taskId, input: { agentId: context.agentId, task } satisfies RunTaskInput });
        enqueue.emit({ type: 'task.started', task });
      }
    }),
    finishTask: enqueueActions(({ context, event, enqueue }) => {
      const outcome = outcomeOf(event);
      if (outcome === undefined) return;
      const found = without(context.running, outcome.taskId);
      if (found === undefined) return;
      enqueue.assign({ running: found.rest });
      // A finished spawned actor stays in `children` until stopped: without this the map grows
      // with every task, and each spawn copies it.
      enqueue.stopChild(outcome.taskId);
      if (found.task.kind !== 'tell') enqueue.cancel(timerId(outcome.taskId));
      const report: TaskReport = outcome.ok
        ? { type: 'task.done', task: found.task, result: outcome.output }
        : { type: 'task.failed', task: found.task, error: outcome.error };
      enqueue.emit(report);
      const reply = replyTo(found.task, context.agentId, report);
      if (reply !== undefined) enqueue.sendTo(reply.to, reply.event);
    }),
    abortTask: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'task.timeout' && event.type !== 'agent.cancel') return;
      const queued = without(context.queue, event.taskId);
      const running = queued === undefined ? without(context.running, event.taskId) : undefined;
      const task = queued?.task ?? running?.task;
      if (task === undefined) return; // already finished: the reply won the race
      if (queued !== undefined) enqueue.assign({ queue: queued.rest });
      if (running !== undefined) {
        enqueue.assign({ running: running.rest });
        // Stopping the task actor aborts its signal; the runtime cancels the run on abort.
        enqueue.stopChild(event.taskId);
      }
      const started = running !== undefined;
      if (event.type === 'agent.cancel') enqueue.cancel(timerId(event.taskId));
      const report: TaskReport =
        event.type === 'task.timeout'
          ? { type: 'task.timedOut', task, started }
          : { type: 'task.cancelled', task, started, ...(event.reason === undefined ? {} : { reason: event.reason }) };
      enqueue.emit(report);
      const reply = replyTo(task, context.agentId, report);
      if (reply !== undefined) enqueue.sendTo(reply.to, reply.event);
    }),
  },
}).createMachine({
  id: 'agentHost',
  description: "An agent's mailbox: runs told and asked tasks as runs of the agent, `concurrency` at a time.",
  context: ({ input }) => ({
    agentId: input.agentId,
    concurrency: Math.max(1, Math.floor(input.concurrency)),
    queue: [],
    running: [],
  }),
  initial: 'idle',
  on: {
    'agent.tell': { target: '.dispatch', actions: 'enqueue' },
    'agent.ask': { target: '.dispatch', actions: 'enqueue' },
    'agent.cancel': { target: '.dispatch', actions: 'abortTask' },
    'agent.send': { actions: 'deliver' },
    'agent.reply': { actions: 'receiveReply' },
    'task.timeout': { target: '.dispatch', actions: 'abortTask' },
    'xstate.done.actor.*': { target: '.dispatch', actions: 'finishTask' },
    'xstate.error.actor.*': { target: '.dispatch', actions: 'finishTask' },
  },
  states: {
    idle: { description: 'No task running; the queue is empty.' },
    busy: { description: 'At least one task is running; more wait in the queue while all slots are taken.' },
    dispatch: {
      description: 'Starts queued tasks while slots are free, then settles in idle or busy.',
      entry: 'startTasks',
      always: [{ guard: 'isBusy', target: 'busy' }, { target: 'idle' }],
    },
  },
});

export type AgentHostMachine = typeof agentHostMachine;

/** One agent in the root's tree. */
export interface AgentNode {
  readonly id: string;
  readonly parent: string | null;
}

export interface AgentSystemContext {
  /** Every live agent, in spawn order. */
  readonly agents: readonly AgentNode[];
}

export type AgentSystemEvent =
  | MessagingEvent
  | { readonly type: 'system.spawn'; readonly id: string; readonly parent?: string; readonly concurrency: number }
  | { readonly type: 'system.stop'; readonly id: string }
  | { readonly type: 'system.stopAll' };

export type AgentSystemEmitted = { readonly type: 'system.agentFailed'; readonly id: string; readonly error: unknown } | ReplyReceived;

/**
 * `id` and every descendant of it, deepest first, so a child never outlives its parent even for
 * the duration of one stop.
 *
 * @example
 * ```ts
 * subtree([{ id: 'a', parent: null }, { id: 'b', parent: 'a' }], 'a'); // ['b', 'a']
 * ```
 */
export function subtree(agents: readonly AgentNode[], id: string): string[] {
  const order: string[] = [];
  const visit = (at: string): void => {
    for (const node of agents) if (node.parent === at) visit(node.id);
    order.push(at);
  };
  if (agents.some((node) => node.id === id)) visit(id);
  return order;
}

/**
 * The root of an agent system: spawns hosts by id (as `systemId`s) and stops subtrees.
 *
 * @example
 * ```ts
 * const root = createActor(agentSystemMachine.provide({ actors: { agentHost: providedHost } })).start();
 * root.send({ type: 'system.spawn', id: 'lead', concurrency: 1 });
 * root.send({ type: 'system.spawn', id: 'helper', parent: 'lead', concurrency: 1 });
 * root.send({ type: 'system.stop', id: 'lead' }); // stops helper, then lead
 * ```
 */
export const agentSystemMachine = setup({
  types: {
    context: {} as AgentSystemContext,
    events: {} as AgentSystemEvent,
    emitted: {} as AgentSystemEmitted,
  },
  actors: { agentHost: agentHostMachine },
  actions: {
    /** Send a message on to its agent's host: this actor is its sender. */
    deliver: enqueueActions(({ event, system, enqueue }) => {
      const found = delivery(system, event);
      if (found !== undefined) enqueue.sendTo(found.to, found.message);
    }),
    receiveReply: emit(({ event }) => received(event)),
    spawnAgent: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'system.spawn') return;
      // The runtime checks first and throws typed errors; this keeps the tree sound regardless.
      if (context.agents.some((node) => node.id === event.id)) return;
      const parent = event.parent ?? null;
      if (parent !== null && !context.agents.some((node) => node.id === parent)) return;
      enqueue.assign({ agents: [...context.agents, { id: event.id, parent }] });
      enqueue.spawnChild('agentHost', { id: event.id, systemId: event.id, input: { agentId: event.id, concurrency: event.concurrency } });
    }),
    stopAgents: enqueueActions(({ context, event, enqueue }) => {
      const ids =
        event.type === 'system.stop'
          ? subtree(context.agents, event.id)
          : event.type === 'system.stopAll'
            ? context.agents.filter((node) => node.parent === null).flatMap((node) => subtree(context.agents, node.id))
            : [];
      if (ids.length === 0) return;
      const stopped = new Set(ids);
      for (const id of ids) enqueue.stopChild(id);
      enqueue.assign({ agents: context.agents.filter((node) => !stopped.has(node.id)) });
    }),
    dropFailedAgent: enqueueActions(({ context, event, enqueue }) => {
      const actorId = (event as { actorId?: unknown }).actorId;
      if (typeof actorId !== 'string') return;
      // A host is never meant to fail; if one does, its subtree goes with it rather than dangling.
      const ids = subtree(context.agents, actorId);
      const stopped = new Set(ids);
      // The failed host is stopped too: that removes it from `children`.
      for (const id of ids) enqueue.stopChild(id);
      enqueue.assign({ agents: context.agents.filter((node) => !stopped.has(node.id)) });
      enqueue.emit({ type: 'system.agentFailed', id: actorId, error: (event as { error?: unknown }).error });
    }),
  },
}).createMachine({
  id: 'agentSystem',
  description: 'The root of an agent system: one agentHost child per agent, addressable by systemId, with a parent/child tree.',
  context: { agents: [] },
  initial: 'running',
  states: {
    running: {
      description: 'Agents are spawned into the system and stopped with their descendants.',
      on: {
        'system.spawn': { actions: 'spawnAgent' },
        'system.stop': { actions: 'stopAgents' },
        'system.stopAll': { actions: 'stopAgents' },
        'xstate.error.actor.*': { actions: 'dropFailedAgent' },
        'agent.send': { actions: 'deliver' },
        'agent.reply': { actions: 'receiveReply' },
      },
    },
  },
});

export type AgentSystemMachine = typeof agentSystemMachine;
