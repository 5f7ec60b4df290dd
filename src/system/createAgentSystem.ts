// One host actor (the agent's mailbox) per agent, with `systemId` = the agent id; stopping a host
// stops its task actors, whose aborted signals cancel the runs.
import { randomUUID } from 'node:crypto';
import { catchError, defer, EMPTY, merge, mergeMap, share, Subject, takeUntil, tap, type Observable } from 'rxjs';
import { createActor, type ActorRefFrom, type AnyActorRef } from 'xstate';
import {
  agentHostMachine,
  agentSystemMachine,
  subtree,
  type AgentHostEmitted,
  type AgentHostMachine,
  type HostTask,
  type TaskReport,
  type HostTaskKind,
  type RunTaskInput,
} from '../../machines/agentHost.machine.ts';
// Importing createAgent installs the RxJS `onUnhandledError` guard: a throwing events$ subscriber never reaches the host.
import { createAgent, type Agent, type AgentConfig, type AgentRun } from '../agent/createAgent.ts';
import { subAgentLogic } from '../agent/subAgentLogic.ts';
import { inheritInspect } from '../agent/config.ts';
import type { LoopResult } from '../core/run.ts';
import type { AgentRuntime } from '../agent/types.ts';
import { ConfigurationError, describeError } from '../core/errors.ts';
import type { JournalEntry } from '../core/loopEvent.ts';
import { SYSTEM_DEFAULTS } from './defaults.ts';
import { createDelegateTool } from './delegateTool.ts';
import { recordMessage, RunPositions, type MessageKind, type MessageSide } from './messageLog.ts';
import { createPendingAsks } from './pendingAsks.ts';
import type { AgentSystem, AgentSystemOptions, AskOptions, MessageReceipt, SpawnOptions, SystemAgent, TellOptions } from './types.ts';
import { AgentSystemError } from './errors.ts';
import { defined } from '../core/defined.ts';

/** First character alphanumeric: keeps `__proto__` and friends out of XState's children object. */
const AGENT_ID = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;

interface Member {
  readonly handle: SystemAgent;
  /** The runtime of an agent the system created from a config. */
  readonly runtime?: AgentRuntime;
  readonly reports: { unsubscribe(): void };
  /** Emits once the member leaves the system: its entries are no longer followed. */
  readonly gone: Subject<void>;
}

interface SendOptions {
  readonly kind: HostTaskKind;
  readonly from?: string;
  readonly senderRunId?: string;
}

function isAgent(value: AgentConfig | Agent): value is Agent {
  return typeof (value as Partial<Agent>).start === 'function' && typeof (value as Partial<Agent>).run === 'function';
}

/**
 * @example
 * ```ts
 * const system = createAgentSystem();
 * system.spawn('researcher', { model });
 * system.spawn('writer', { model, tools: [system.delegateTool('researcher')] });
 * const { text } = await system.ask('writer', 'One paragraph on the actor model.');
 * ```
 */
export function createAgentSystem(options: AgentSystemOptions = {}): AgentSystem {
  const members = new Map<string, Member>();
  const liveRuns = new Map<string, { readonly agentId: string; readonly run: AgentRun; readonly senderRunId?: string }>();
  const messages = new Subject<JournalEntry>();
  const spawned = new Subject<Member>();
  const positions = new RunPositions();
  const entriesOf = (found: Member): Observable<JournalEntry> =>
    found.handle.agent.events$.pipe(
      takeUntil(found.gone),
      catchError((error: unknown) => {
        console.warn(`[actorloop] the entries of agent ${found.handle.id} could not be followed:`, error);
        return EMPTY;
      }),
    );
  // Members are followed only while someone watches the system: following a durable member makes its
  // workers publish every streamed call's deltas to this process. Unwatched, positions come from journals.
  const followed = defer(() => merge(...[...members.values()].map(entriesOf), spawned.pipe(mergeMap(entriesOf)))).pipe(
    tap((entry) => positions.observe(entry)),
    share(),
  );
  const asks = createPendingAsks((runId) => liveRuns.get(runId)?.run);
  let closed = false;

  // A task is a sub-agent run: its agent loop is spawned as the task actor's child, under the
  // agent's host, so stopping the host (or timing out the ask) stops the run through XState.
  const runTask = subAgentLogic((input) => {
    const { agentId, task } = input as RunTaskInput;
    const member = members.get(agentId);
    if (member === undefined) throw AgentSystemError.notFound(agentId, [...members.keys()]);
    return {
      prepared: member.handle.agent.prepare(task.message, { runId: task.runId }),
      attached: (run) => liveRuns.set(run.runId, { agentId, run, ...defined({ senderRunId: task.senderRunId }) }),
      conclude: (result) => {
        liveRuns.delete(result.runId);
        return result;
      },
    };
  });
  const root = createActor(agentSystemMachine.provide({ actors: { agentHost: agentHostMachine.provide({ actors: { runTask } }) } }), {
    ...defined({ inspect: options.inspect }),
  });
  // The root error observer: an actor error must never be rethrown into the process.
  root.subscribe({ error: (error) => console.warn('[actorloop] the agent system actor failed:', error) });
  root.on('reply.received', ({ from, report }) => onReply(from, report));
  root.on('system.agentFailed', ({ id, error }) => {
    console.warn(`[actorloop] agent ${id}'s host failed and was removed with its children:`, error);
    // The root has already stopped the failed host's subtree; only the bookkeeping is left.
    const tree = new Set(root.getSnapshot().context.agents.map((node) => node.id));
    halt([...members.keys()].filter((key) => !tree.has(key)), () => undefined);
  });
  root.start();

  const ids = (): string[] => [...members.keys()];
  const member = (id: string): Member => {
    const found = typeof id === 'string' ? members.get(id) : undefined;
    if (found === undefined) throw AgentSystemError.notFound(String(id), ids());
    return found;
  };
  const ensureOpen = (what: string): void => {
    if (closed) throw new ConfigurationError(`This agent system was stopped with stopAll(); ${what} needs a new one: createAgentSystem().`);
  };
  /** `fresh`: the run is the task's own, not started yet (its journal has nothing to look up). */
  const sideOf = (agentId: string, runId: string, fresh = false): MessageSide | undefined => {
    const found = members.get(agentId);
    if (found === undefined) return undefined;
    const position = fresh ? 'fresh' : positions.get(runId);
    const { agent } = found.handle;
    return {
      agentId,
      journal: agent.journal,
      runId,
      record: (event) => agent.record(runId, event),
      ...(position === undefined ? {} : { position }),
    };
  };
  const publish = (entry: JournalEntry): void => messages.next(entry);

  function prepare(to: string, message: string, send: SendOptions): { task: HostTask; host: Member } {
    ensureOpen('sending a message');
    const host = member(to);
    if (typeof message !== 'string' || message.trim() === '') {
      throw new ConfigurationError(`A message to agent "${to}" must be a non-empty string: it becomes that agent's task.`);
    }
    if (send.from !== undefined && send.kind !== 'delegate') member(send.from);
    const task: HostTask = {
      taskId: `msg_${randomUUID()}`,
      runId: host.runtime?.runIdFor?.() ?? `run_${randomUUID()}`,
      kind: send.kind,
      from: send.from ?? SYSTEM_DEFAULTS.externalSender,
      message,
      ...defined({ senderRunId: send.senderRunId }),
    };
    recordMessage(
      [sideOf(task.from, send.senderRunId ?? task.runId, send.senderRunId === undefined), sideOf(to, task.runId, true)],
      { from: task.from, to, kind: send.kind, correlationId: task.taskId, runId: task.runId },
      publish,
    );
    return { task, host };
  }

  const senderOf = (from: string | undefined): AnyActorRef => (from === undefined ? undefined : members.get(from)?.handle.actor) ?? root;

  function tell(to: string, message: string, tellOptions: TellOptions = {}): MessageReceipt {
    const { task } = prepare(to, message, { kind: 'tell', ...defined({ from: tellOptions.from }) });
    senderOf(tellOptions.from).send({ type: 'agent.send', to, message: { type: 'agent.tell', task } });
    return { correlationId: task.taskId, runId: task.runId };
  }

  function ask(to: string, message: string, askOptions: AskOptions & { kind?: HostTaskKind; senderRunId?: string } = {}): Promise<LoopResult> {
    try {
      const timeoutMs = askOptions.timeoutMs ?? SYSTEM_DEFAULTS.askTimeoutMs;
      if (!(Number.isFinite(timeoutMs) && timeoutMs > 0)) {
        throw new ConfigurationError(`ask timeoutMs must be a positive number of milliseconds (got ${String(timeoutMs)}).`);
      }
      if (askOptions.signal?.aborted === true) return Promise.reject(askOptions.signal.reason);
      const { task, host } = prepare(to, message, {
        kind: askOptions.kind ?? 'ask',
        ...defined({ from: askOptions.from, senderRunId: askOptions.senderRunId }),
      });
      const answer = asks.add(to, task, timeoutMs, askOptions.signal, (reason) => {
        // A stopped host has cancelled the task already; the ask is rejected as stopped.
        if (host.handle.actor.getSnapshot().status === 'active') {
          host.handle.actor.send({ type: 'agent.cancel', taskId: task.taskId, reason: describeError(reason) });
        }
      });
      // A request with a correlation id (the task id); the answer comes back to the sender as `agent.reply`.
      const sender = senderOf(askOptions.from);
      sender.send({ type: 'agent.send', to, message: { type: 'agent.ask', task: { ...task, timeoutMs, replyTo: sender } } });
      return answer;
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * A delegation back up its own chain (A → B → A) would queue behind the very runs that wait
   * for it: when all of the target's slots are taken by those runs, nothing can ever free one.
   */
  function refuseDeadlock(to: string, senderRunId: string): void {
    const found = members.get(to);
    if (found === undefined) return;
    let waiting = 0;
    const seen = new Set<string>();
    for (let at: string | undefined = senderRunId; at !== undefined && !seen.has(at); ) {
      seen.add(at);
      const live = liveRuns.get(at);
      if (live === undefined) break;
      if (live.agentId === to) waiting++;
      at = live.senderRunId;
    }
    const { concurrency } = found.handle.actor.getSnapshot().context;
    if (waiting > 0 && waiting >= concurrency) {
      throw new ConfigurationError(
        `Agent "${to}" is waiting on this delegation (it delegated the work that led here) and has no free slot (concurrency ${concurrency}), so it could never take the task. Answer it yourself, delegate to another agent, or spawn "${to}" with a higher concurrency.`,
      );
    }
  }

  function onReply(agentId: string, report: TaskReport): void {
    if (report.type === 'task.done') {
      const { task } = report;
      const kind: MessageKind = task.kind === 'delegate' ? 'delegate.result' : 'reply';
      recordMessage([sideOf(agentId, task.runId), sideOf(task.from, task.senderRunId ?? task.runId)], { from: agentId, to: task.from, kind, correlationId: task.taskId, runId: task.runId }, publish);
    }
    asks.onReport(report);
  }

  /** A told task that failed has no asker to hear of it. */
  function onHostReport(agentId: string, report: AgentHostEmitted): void {
    if (report.type === 'reply.received') onReply(report.from, report.report);
    else if (report.type === 'task.failed' && report.task.kind === 'tell') {
      console.warn(`[actorloop] agent ${agentId} could not run a told task (${report.task.taskId}):`, report.error);
    } else if (report.type !== 'task.started' && report.task.kind !== 'tell' && report.task.replyTo?.getSnapshot().status !== 'active') {
      // The asker's mailbox was stopped (the agent that sent it): the host drops the reply, so the ask is settled here.
      onReply(agentId, report);
    }
  }

  function halt(stopped: readonly string[], stopActors: () => void): void {
    const gone = new Set(stopped);
    const ending = [...liveRuns.values()].filter((live) => gone.has(live.agentId)).map((live) => live.run.settled);
    stopActors();
    const agents: Agent[] = [];
    for (const id of stopped) {
      const found = members.get(id);
      if (found === undefined) continue;
      found.reports.unsubscribe();
      found.gone.next();
      found.gone.complete();
      members.delete(id);
      agents.push(found.handle.agent);
    }
    asks.rejectFor(gone);
    // Only once the cancelled runs have settled: Agent#stop() would otherwise cancel them again.
    void Promise.all(ending).then(() => {
      for (const agent of agents) agent.stop();
    });
  }

  function stop(id: string): void {
    ensureOpen('stop()');
    member(id);
    halt(subtree(root.getSnapshot().context.agents, id), () => root.send({ type: 'system.stop', id }));
  }

  function spawn(id: string, source: AgentConfig | Agent, spawnOptions: SpawnOptions = {}): SystemAgent {
    ensureOpen('spawn()');
    if (typeof id !== 'string' || !AGENT_ID.test(id)) {
      throw new ConfigurationError(`Agent id ${JSON.stringify(id)} is not valid: use 1–128 characters from a-z, A-Z, 0-9, "_", ".", ":" and "-", starting with a letter or digit.`);
    }
    if (members.has(id)) throw new ConfigurationError(`An agent "${id}" is already in this system. Pick another id, or stop("${id}") first.`);
    const parent = spawnOptions.parent;
    if (parent !== undefined) member(parent);
    const concurrency = spawnOptions.concurrency ?? SYSTEM_DEFAULTS.concurrency;
    if (!Number.isInteger(concurrency) || concurrency < 1) {
      throw new ConfigurationError(`concurrency must be a positive integer (got ${String(concurrency)}).`);
    }
    if (source === null || typeof source !== 'object') throw new ConfigurationError(`spawn("${id}", …) needs an agent config ({ model, … }) or an Agent from createAgent().`);
    const agentId = isAgent(source) ? source.id : (source.id ?? id);
    if (agentId !== id) {
      throw new ConfigurationError(`spawn("${id}", …) got an agent whose id is "${agentId}"; journals would disagree on who it is. Create it with id "${id}", or spawn it as "${agentId}".`);
    }
    const agent = isAgent(source)
      ? source
      : createAgent(inheritInspect({ ...defined({ runtime: options.runtime }), ...source, id }, options.inspect));

    root.send({ type: 'system.spawn', id, concurrency, ...defined({ parent }) });
    // Typed by the machine that spawned it; `system.get` only knows it is some actor.
    const actor = root.system.get(id) as ActorRefFrom<AgentHostMachine> | undefined;
    if (actor === undefined) throw new ConfigurationError(`Agent "${id}" could not be spawned into the system (its host actor is missing).`);
    const handle: SystemAgent = {
      id,
      parent,
      agent,
      actor,
      children: () => root.getSnapshot().context.agents.filter((node) => node.parent === id).map((node) => node.id),
      tell: (message, tellOptions) => tell(id, message, tellOptions),
      ask: (message, askOptions) => ask(id, message, askOptions),
      stop: () => stop(id),
    };
    const runtime = isAgent(source) ? undefined : (source.runtime ?? options.runtime);
    const joined: Member = { handle, ...defined({ runtime }), reports: actor.on('*', (report) => onHostReport(id, report)), gone: new Subject<void>() };
    members.set(id, joined);
    spawned.next(joined);
    return handle;
  }

  return {
    actor: root,
    events$: merge(messages, followed),
    spawn,
    get: (id) => member(id).handle,
    has: (id) => members.has(id),
    list: () => [...members.values()].map((found) => found.handle),
    tell,
    ask: (to, message, askOptions) => ask(to, message, askOptions),
    delegateTool: (to, toolOptions = {}) =>
      createDelegateTool(to, toolOptions, (target, task, delegation) => {
        try {
          refuseDeadlock(target, delegation.senderRunId);
        } catch (error) {
          return Promise.reject(error);
        }
        return ask(target, task, { ...delegation, kind: 'delegate' });
      }),
    stop,
    stopAll() {
      if (closed) return;
      halt([...members.keys()], () => {
        root.send({ type: 'system.stopAll' });
        root.stop();
      });
      closed = true;
      spawned.complete();
      messages.complete();
    },
  };
}
