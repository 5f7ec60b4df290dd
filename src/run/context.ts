/** One run's life, handed to each phase: numbers and redacts its journal, records what a resume needs, answers a resumed run from it. */
import type { AnyActorRef } from 'xstate';
import { ConfigurationError } from '../core/errors.ts';
import type { JournalEntry, LoopEvent } from '../core/loopEvent.ts';
import type { Usage } from '../core/provider.ts';
import { checkElicitAnswer, type McpElicitOutcome } from '../mcp/elicitation.ts';
import { McpError } from '../mcp/errors.ts';
import type { EffectLedger } from '../core/run.ts';
import type { SessionMemory } from '../core/sessionMemory.ts';
import type { CallJournal } from '../executor/executor.ts';
import type { RecoveredRun } from '../persistence/recover.ts';
import type { RunOwner } from '../persistence/records.ts';
import type { CheckpointData, ReplyRecord } from '../persistence/runWriter.ts';
import type { AgentEvent } from '../../machines/agent.types.ts';
import type { PhaseReply } from '../../machines/phaseRunner.ts';
import type { RunPersistence } from './persistence.ts';
import { machineEventsIn, Replay, type ReplyOutputs } from './replay.ts';

export interface RunContextOptions {
  readonly runId: string;
  readonly agentId: string;
  readonly redact: (event: LoopEvent) => LoopEvent;
  readonly publish: (entry: JournalEntry) => void;
  readonly persistence?: RunPersistence;
  readonly recovered?: RecoveredRun;
  /** A single model call (`agent.call`): no tools offered. */
  readonly toolsOff?: boolean;
  readonly session?: SessionMemory;
  /** The owner a resume took the run over from. */
  readonly tookOver?: RunOwner;
}

export interface RunQuestion {
  readonly server: string;
  readonly message: string;
  readonly schema: Readonly<Record<string, unknown>>;
  /** Aborted when the server gives up: the wait ends as a cancel. */
  readonly signal: AbortSignal;
}

export type SendToRun = (event: AgentEvent | PhaseReply) => void;

export class RunContext {
  readonly runId: string;
  readonly agentId: string;
  readonly replay?: Replay;
  readonly persistence?: RunPersistence;
  /** The executor's durability hooks: a call made for real ends the replay. */
  readonly journal?: CallJournal;
  readonly effects?: EffectLedger;
  readonly toolsOff: boolean;
  readonly session?: SessionMemory;
  readonly recorded: boolean;
  toMachine: SendToRun | undefined = undefined;
  turnEnded = 0;
  /** Counted again on a replay, from its checkpoint's. */
  iteration: number;
  #sequence: number;
  /** Events the resumed machine emits again that the journal already holds. */
  #alreadyJournaled: number;
  readonly #options: RunContextOptions;
  #question: { readonly question: RunQuestion; readonly settle: (outcome: McpElicitOutcome) => void } | undefined;
  /** The human answers one question at a time. */
  #questions: Promise<unknown> = Promise.resolve();

  constructor(options: RunContextOptions) {
    const { runId, agentId, persistence, recovered } = options;
    this.#options = options;
    this.runId = runId;
    this.agentId = agentId;
    this.#sequence = recovered?.nextSequence ?? 0;
    this.iteration = recovered?.checkpoint?.iteration ?? 0;
    this.toolsOff = options.toolsOff === true;
    if (options.session !== undefined) this.session = options.session;
    if (persistence !== undefined) this.persistence = persistence;
    if (persistence?.effects !== undefined) this.effects = persistence.effects;
    const replay = recovered === undefined ? undefined : new Replay(runId, recovered.replay);
    if (replay !== undefined) this.replay = replay;
    // The replay emits the journal's events again: as many as it holds are skipped, the rest are new.
    this.#alreadyJournaled = recovered === undefined ? 0 : machineEventsIn(recovered.eventCounts);
    const hooks = persistence?.journal;
    this.recorded = replay !== undefined || hooks !== undefined;
    if (hooks !== undefined) {
      this.journal =
        replay === undefined
          ? hooks
          : {
              before(call, tool, key) {
                const recorded = hooks.before(call, tool, key);
                if (recorded === undefined) replay.goLive();
                return recorded;
              },
              after: (call, outcome, key) => hooks.after(call, outcome, key),
              breaker: (saved) => hooks.breaker?.(saved),
            };
    }
  }

  get replaying(): boolean {
    return this.replay?.replaying === true;
  }

  readonly publish = (event: LoopEvent): void => {
    const { agentId, runId } = this;
    const entry: JournalEntry = { sequence: this.#sequence++, timestamp: Date.now(), agentId, runId, iteration: this.iteration, event: this.#options.redact(event) };
    this.persistence?.record(entry);
    this.#options.publish(entry);
  };

  /** The runtime's own events: only from work done for real, not while replaying. */
  readonly emit = (event: LoopEvent): void => {
    if (this.replay?.replaying !== true) this.publish(event);
  };

  get sequence(): number {
    return this.#sequence;
  }

  /** `undefined` when the phase must run for real. */
  replayed<TPhase extends keyof ReplyOutputs>(phase: TPhase, iteration?: number): ReplyOutputs[TPhase] | undefined {
    return this.replay?.reply(phase, iteration);
  }

  /** Not a durable run's worker, which goes on where its last step stopped. */
  resumed(): void {
    const { recovered, tookOver } = this.#options;
    if (recovered === undefined || recovered.continued === true) return;
    this.publish({
      type: 'run.resumed',
      replayed: recovered.replay.length,
      ...(tookOver === undefined ? {} : { tookOver: { pid: tookOver.pid, ...(tookOver.host === undefined ? {} : { host: tookOver.host }) } }),
    });
  }

  /** Journalled unless a replay emits it again; a replayed human wait is answered as recorded; a live decision is recorded. */
  observe(event: LoopEvent, send: SendToRun): void {
    const { replay } = this;
    if (event.type === 'reasoning.completed') this.iteration++;
    if (replay?.replaying === true && event.type === 'human.awaiting') replayHuman(replay, send);
    else if (replay?.replaying === true && event.type === 'run.terminated') replay.goLive();
    else if (event.type === 'human.decided' && replay?.replaying !== true) {
      this.recordReply({ kind: 'human', decision: event.decision, toolCallIds: event.toolCallIds, ...(event.reason === undefined ? {} : { reason: event.reason }) });
    }
    if (this.#alreadyJournaled > 0) {
      this.#alreadyJournaled--;
      // The run entered this reason phase before it stopped, and ended the turn before it there.
      if (event.type === 'phase.entered' && event.phase === 'reason') this.turnEnded = Math.max(this.turnEnded, this.iteration);
    } else this.publish(event);
  }

  atPhase(phase: string, iteration: number, take: () => CheckpointData): void {
    const { persistence } = this;
    if (persistence === undefined) return;
    persistence.onPhase(this.asking ? 'awaitingHuman' : phase);
    // Not while replaying, nor while re-emitting journalled events: a resume from this checkpoint would skip or double them.
    if (phase === 'reason' && this.replay?.replaying !== true && this.#alreadyJournaled === 0) persistence.checkpoint(iteration, take);
  }

  /** Usage outside the reason phase (an MCP server's sample), added to the run's totals. */
  spent(server: string, model: string, usage: Usage, costUsd: number): void {
    this.emit({ type: 'mcp.sampled', server, model, usage: { ...usage }, costUsd });
    this.toMachine?.({ type: 'agent.usage', usage, costUsd });
  }

  get asking(): boolean {
    return this.#question !== undefined;
  }

  /** The run waits (`human.awaiting`, kind `elicitation`) until `answer`, or a cancel. */
  ask(question: RunQuestion): Promise<McpElicitOutcome> {
    const asked = this.#questions.then(
      () =>
        new Promise<McpElicitOutcome>((resolve) => {
          if (question.signal.aborted) return resolve({ action: 'cancel' });
          const settle = (outcome: McpElicitOutcome): void => {
            if (this.#question?.settle !== settle) return;
            this.#question = undefined;
            question.signal.removeEventListener('abort', dismissed);
            this.persistence?.onPhase('act');
            resolve(outcome);
          };
          const dismissed = (): void => {
            this.publish({ type: 'human.decided', kind: 'elicitation', decision: 'reject', toolCallIds: [], reason: 'The question was withdrawn: the server gave up on it, or the call that asked it ended.' });
            settle({ action: 'cancel' });
          };
          this.#question = { question, settle };
          question.signal.addEventListener('abort', dismissed, { once: true });
          const { server, message, schema } = question;
          this.publish({ type: 'human.awaiting', kind: 'elicitation', toolCallIds: [], question: { server, message, schema: { ...schema } } });
          this.persistence?.onPhase('awaitingHuman');
        }),
    );
    this.#questions = asked.catch(() => undefined);
    return asked;
  }

  /** `approve` sends `answer`, checked against the server's form (an `McpError`, code `mcp_answer_invalid`, and it still waits); `reject` declines it. */
  answer(decision: 'approve' | 'reject', answer?: unknown, reason?: string): void {
    const waiting = this.#question;
    if (waiting === undefined) return;
    if (decision === 'reject') {
      this.publish({ type: 'human.decided', kind: 'elicitation', decision, toolCallIds: [], ...(reason === undefined ? {} : { reason }) });
      waiting.settle({ action: 'decline' });
      return;
    }
    const checked = checkElicitAnswer(waiting.question.schema, answer ?? {});
    if ('problems' in checked) throw McpError.answerInvalid(waiting.question.server, checked.problems, { runId: this.runId });
    this.publish({ type: 'human.decided', kind: 'elicitation', decision, toolCallIds: [], answer: checked.content });
    waiting.settle({ action: 'accept', content: checked.content });
  }

  dismissQuestion(): void {
    this.#question?.settle({ action: 'cancel' });
  }

  recordReply(record: ReplyRecord): void {
    if (this.persistence?.journal !== undefined) this.persistence.reply(record);
  }
}

/** A resumed run's wait applies the recorded decision, or goes live; a log that recorded something else fails the run. */
function replayHuman(replay: Replay, send: SendToRun): void {
  let decision: ReturnType<Replay['human']>;
  try {
    decision = replay.human();
  } catch (error) {
    queueMicrotask(() => send({ type: 'phase.error', phase: 'act', error }));
    return;
  }
  if (decision !== undefined) queueMicrotask(() => send(humanEvent(decision)));
}

function humanEvent(decision: { decision: 'approve' | 'reject'; toolCallIds: readonly string[]; reason?: string }): AgentEvent {
  return decision.decision === 'approve'
    ? { type: 'agent.approve', toolCallIds: decision.toolCallIds }
    : { type: 'agent.reject', toolCallIds: decision.toolCallIds, ...(decision.reason === undefined ? {} : { reason: decision.reason }) };
}

/** Each live run's context, by its actor: its phases' worker finds it once, when it starts. */
const contexts = new WeakMap<AnyActorRef, RunContext>();

export function bindRun(actor: AnyActorRef, context: RunContext): void {
  contexts.set(actor, context);
}

export function runOf(actor: AnyActorRef | undefined): RunContext {
  const context = actor === undefined ? undefined : contexts.get(actor);
  if (context === undefined) {
    throw new ConfigurationError("An agent's machine runs only as an agent's run: start it with agent.start(), or attach its actor with agent.prepare(task).attach(actor).");
  }
  return context;
}
