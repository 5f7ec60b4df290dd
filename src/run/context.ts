/**
 * The life of one run: made when the run starts (or resumes), handed to each of its phases,
 * gone with it. It numbers and redacts what the run journals, records what a resume needs
 * (phase replies, human decisions, tool calls) and, on a resumed run, answers from that record
 * until the run does live work again. A file store and a durable runtime record through it alike;
 * a durable runtime's worker also routes the run's calls through its `effects`.
 */
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
  /** Takes secrets out of an event before anything sees it. */
  readonly redact: (event: LoopEvent) => LoopEvent;
  /** Where the run's journal entries go live (the agent's bus). */
  readonly publish: (entry: JournalEntry) => void;
  readonly persistence?: RunPersistence;
  /** What the log held, when the run is resumed. */
  readonly recovered?: RecoveredRun;
  /** A single model call (`agent.call`): the model is offered no tools. */
  readonly toolsOff?: boolean;
  /** The session's memory, when the run is a session's turn. */
  readonly session?: SessionMemory;
  /** The owner a resume took the run over from (its `run.resumed` event names it). */
  readonly tookOver?: RunOwner;
}

/** A question an MCP server puts to the run's human during a tool call. */
export interface RunQuestion {
  readonly server: string;
  readonly message: string;
  readonly schema: Readonly<Record<string, unknown>>;
  /** Aborted when the server gives up on it: the wait ends as a cancel. */
  readonly signal: AbortSignal;
}

/** How a run's machine is told a recorded human decision again. */
export type SendToRun = (event: AgentEvent | PhaseReply) => void;

export class RunContext {
  readonly runId: string;
  readonly agentId: string;
  /** Set while a resumed run re-takes its recorded steps. */
  readonly replay?: Replay;
  /** The run's store, when it has one: the journal, and for a resumable run its replies and calls. */
  readonly persistence?: RunPersistence;
  /** The executor's durability hooks (resumable runs): a call made for real ends the replay. */
  readonly journal?: CallJournal;
  readonly effects?: EffectLedger;
  readonly toolsOff: boolean;
  readonly session?: SessionMemory;
  /** Whether the run has phase replies to take again or to keep (a resumed or resumable run). */
  readonly recorded: boolean;
  /** Sends the run's machine an event (set when the run's actor is attached). */
  toMachine: SendToRun | undefined = undefined;
  /** The last turn whose `onTurnEnd` hook ran (0: none yet). */
  turnEnded = 0;
  /** The iteration journal entries are stamped with: counted again on a replay, from its checkpoint's. */
  iteration: number;
  #sequence: number;
  /** Events the resumed machine emits again that the journal already holds: skipped, not journalled twice. */
  #alreadyJournaled: number;
  readonly #options: RunContextOptions;
  /** The question the run's human is asked now, and how to answer it. */
  #question: { readonly question: RunQuestion; readonly settle: (outcome: McpElicitOutcome) => void } | undefined;
  /** Questions wait for the one before them: the human answers one at a time. */
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
    // The machine emits the same events again while it re-takes recorded steps: as many as the
    // journal holds are skipped, the rest (emitted after the last write before the crash) are new.
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

  /** True while a resumed run re-takes recorded steps (their events are in the journal already). */
  get replaying(): boolean {
    return this.replay?.replaying === true;
  }

  /** Journal an event: numbered, stamped, redacted, then stored and published. */
  readonly publish = (event: LoopEvent): void => {
    const { agentId, runId } = this;
    const entry: JournalEntry = { sequence: this.#sequence++, timestamp: Date.now(), agentId, runId, iteration: this.iteration, event: this.#options.redact(event) };
    this.persistence?.record(entry);
    this.#options.publish(entry);
  };

  /** The runtime's own events (tools, policy, provider): only from work done for real, not while replaying. */
  readonly emit = (event: LoopEvent): void => {
    if (this.replay?.replaying !== true) this.publish(event);
  };

  /** The next entry's sequence number (a checkpoint keeps it). */
  get sequence(): number {
    return this.#sequence;
  }

  /** A phase's recorded reply while replaying; `undefined` when the phase must run for real. */
  replayed<TPhase extends keyof ReplyOutputs>(phase: TPhase, iteration?: number): ReplyOutputs[TPhase] | undefined {
    return this.replay?.reply(phase, iteration);
  }

  /** A resumed run says so in its journal (not a durable run's worker, which goes on where its last step stopped). */
  resumed(): void {
    const { recovered, tookOver } = this.#options;
    if (recovered === undefined || recovered.continued === true) return;
    this.publish({
      type: 'run.resumed',
      replayed: recovered.replay.length,
      ...(tookOver === undefined ? {} : { tookOver: { pid: tookOver.pid, ...(tookOver.host === undefined ? {} : { host: tookOver.host }) } }),
    });
  }

  /**
   * An event the run's machine emitted: journalled, unless a replay emits it again; a wait for a
   * human the replay reaches is answered as recorded; a decision made live is recorded.
   */
  observe(event: LoopEvent, send: SendToRun): void {
    const { replay } = this;
    if (event.type === 'reasoning.completed') this.iteration++;
    if (replay?.replaying === true && event.type === 'human.awaiting') replayHuman(replay, send);
    else if (replay?.replaying === true && event.type === 'run.terminated') replay.goLive();
    else if (event.type === 'human.decided' && replay?.replaying !== true) {
      this.recordReply({ kind: 'human', decision: event.decision, toolCallIds: event.toolCallIds, ...(event.reason === undefined ? {} : { reason: event.reason }) });
    }
    if (this.#alreadyJournaled > 0) this.#alreadyJournaled--;
    else this.publish(event);
  }

  /** The machine is in `phase` (on every snapshot): the store writes where it must, and a new iteration may be checkpointed. */
  atPhase(phase: string, iteration: number, take: () => CheckpointData): void {
    const { persistence } = this;
    if (persistence === undefined) return;
    persistence.onPhase(this.asking ? 'awaitingHuman' : phase);
    // An iteration starts. Not while replaying: what is replayed is in the log before the
    // checkpoint would be, and a resume from it would skip it; nor while the machine emits
    // events the journal already holds (they would be journaled before it and again after).
    if (phase === 'reason' && this.replay?.replaying !== true && this.#alreadyJournaled === 0) persistence.checkpoint(iteration, take);
  }

  /** Model usage spent for the run outside its reason phase (an MCP server's sample): journalled and added to its totals. */
  spent(server: string, model: string, usage: Usage, costUsd: number): void {
    this.emit({ type: 'mcp.sampled', server, model, usage: { ...usage }, costUsd });
    this.toMachine?.({ type: 'agent.usage', usage, costUsd });
  }

  /** True while an MCP server's question waits for the run's human (the run is then `awaitingHuman`). */
  get asking(): boolean {
    return this.#question !== undefined;
  }

  /**
   * Put a server's question to the run's human: the run waits (journalled as `human.awaiting`,
   * kind `elicitation`, and stored as awaiting a human) until `answer`, or a cancel.
   */
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

  /**
   * Answer the waiting question: `approve` sends `answer` (checked against the server's form,
   * its defaults filled in; a bad one throws `McpError` (`mcp_answer_invalid`) and the question still waits),
   * `reject` declines it.
   */
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

  /** The run ended (or was cancelled) while its human was asked: the server gets `cancel`. */
  dismissQuestion(): void {
    this.#question?.settle({ action: 'cancel' });
  }

  /** Record a phase reply or human decision for a resume to take again (resumable runs only). */
  recordReply(record: ReplyRecord): void {
    if (this.persistence?.journal !== undefined) this.persistence.reply(record);
  }
}

/**
 * A resumed run waits for a human again: the decision the log recorded for this wait is applied
 * again, or, when none was made, the run goes live and waits for one. A log that recorded
 * something else next does not belong to this run's configuration: the run fails.
 */
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

/** The machine event that applies a recorded human decision again. */
function humanEvent(decision: { decision: 'approve' | 'reject'; toolCallIds: readonly string[]; reason?: string }): AgentEvent {
  return decision.decision === 'approve'
    ? { type: 'agent.approve', toolCallIds: decision.toolCallIds }
    : { type: 'agent.reject', toolCallIds: decision.toolCallIds, ...(decision.reason === undefined ? {} : { reason: decision.reason }) };
}

/** Each live run's context, by the run's actor: its phases' worker finds it once, when it starts. */
const contexts = new WeakMap<AnyActorRef, RunContext>();

/** Make `context` the context of the run `actor` is (before the actor starts). */
export function bindRun(actor: AnyActorRef, context: RunContext): void {
  contexts.set(actor, context);
}

/** The context of the run `actor` is: what its phases are handed. */
export function runOf(actor: AnyActorRef | undefined): RunContext {
  const context = actor === undefined ? undefined : contexts.get(actor);
  if (context === undefined) {
    throw new ConfigurationError("An agent's machine runs only as an agent's run: start it with agent.start(), or attach its actor with agent.prepare(task).attach(actor).");
  }
  return context;
}
