/**
 * What a persisted run writes, and when. Each tool call is recorded, durably, before it runs
 * (with everything buffered before it: the model reply that proposed it, the gate's decision,
 * the journal) and again as soon as it ends; the rest is written when the run waits for a human
 * and when it ends. A crash therefore loses only work that had not led to a tool call: model
 * calls since the last one (made again on resume), a gate decision (taken again), or a tool call
 * in flight (made again with the same key if its tool is idempotent, else put to a human); and
 * of the journal, only the runtime's events of that work (a resumed run's machine emits its own
 * events again, and those the journal lacks are kept).
 */
import type { ActCall, EffectLedger, ToolOutcome } from '../core/run.ts';
import type { JournalEntry, TerminationReason } from '../core/loopEvent.ts';
import type { CallKey } from '../executor/callKey.ts';
import type { CallJournal } from '../executor/executor.ts';
import type { CallAttempt, RecordedCalls } from '../persistence/recover.ts';
import type { CheckpointData, ReplyRecord, RunEnding, RunWriter } from '../persistence/runWriter.ts';
import type { Tool } from '../tools/types.ts';

export interface RunPersistence {
  /** The executor's durability hooks; absent for a journal-only run (nothing to resume, nothing to replay). */
  readonly journal?: CallJournal;
  /** Where the run's model and tool calls are recorded when a durable runtime steps it. */
  readonly effects?: EffectLedger;
  record(entry: JournalEntry): void;
  /** A phase reply or human decision the machine took, for a resume to replay (resumable runs only). */
  reply(record: ReplyRecord): void;
  /** Call on every snapshot with the phase the machine is in; writes at the phases that need it. */
  onPhase(phase: string): void;
  /**
   * A live run enters `iteration`'s reason phase: writes the checkpoint `take` makes when the
   * store's policy wants one there.
   */
  checkpoint(iteration: number, take: () => CheckpointData): void;
  /** Called once if another process takes the run over: this one must stop. */
  onLost(listener: (reason: string) => void): void;
  /** Record how the run ended, write everything and release the run. Never rejects. */
  finish(reason: TerminationReason, ending: RunEnding): Promise<void>;
}

/** What the run's writer asks for: everything a resume needs, or (journal-only store) the journal. */
export function createRunPersistence(writer: RunWriter, recorded?: RecordedCalls): RunPersistence {
  return writer.journalOnly ? journalPersistence(writer) : resumablePersistence(writer, recorded);
}

/**
 * The journal only: entries are buffered and, at each phase change, handed to a background
 * write (started when the loop next yields), so the loop never waits for the disk. The status
 * still goes to meta.json when a human is awaited (the run index shows it); `finish` waits for
 * the last write.
 */
function journalPersistence(writer: RunWriter): RunPersistence {
  let lastPhase: string | undefined;
  let failure: unknown;
  const fail = (error: unknown): void => {
    failure ??= error;
  };
  /**
   * A background write is pending: it takes everything recorded until it ends, so phase changes
   * meanwhile need no call of their own (a promise and a reaction each, four times an iteration).
   */
  let writing = false;
  const written = (): void => {
    writing = false;
  };
  const writeFailed = (error: unknown): void => {
    writing = false;
    fail(error);
  };
  return {
    record(entry) {
      try {
        writer.event(entry);
      } catch (error) {
        fail(error);
      }
    },
    reply() {
      // Nothing to replay: a journal-only run is never resumed.
    },
    checkpoint() {
      // Nothing to restore either.
    },
    onPhase(phase) {
      if (phase === lastPhase) return;
      const previous = lastPhase;
      lastPhase = phase;
      if (!writing) {
        writing = true;
        writer.flushBehind().then(written, writeFailed);
      }
      try {
        if (phase === 'awaitingHuman') writer.setStatus('awaiting_human');
        else if (previous === 'awaitingHuman') writer.setStatus('running');
      } catch (error) {
        fail(error);
      }
    },
    onLost: (listener) => writer.onLost(listener),
    async finish(reason, ending) {
      try {
        writer.end(reason, ending);
      } catch (error) {
        fail(error);
      } finally {
        await writer.close().catch(fail);
      }
      if (failure !== undefined) console.warn(`[actorloop] run ${writer.runId}: writing the journal failed:`, failure);
    },
  };
}



function resumablePersistence(writer: RunWriter, recorded?: RecordedCalls): RunPersistence {
  // Consumed as the resumed run makes its calls again: each key's attempts in the order they were made.
  const attempts = new Map<string, CallAttempt[]>();
  for (const [key, made] of recorded?.attempts ?? []) attempts.set(key, [...made]);
  let lastPhase: string | undefined;
  let failure: unknown;
  const attempt = (work: () => void): void => {
    try {
      work();
    } catch (error) {
      failure ??= error;
    }
  };

  const journal: CallJournal = {
    before(call: ActCall, tool: Tool, key: CallKey) {
      const made = attempts.get(key.key);
      while (made !== undefined && made.length > 0) {
        const previous = made.shift();
        if (previous?.outcome !== undefined) return { ...previous.outcome, toolCallId: call.call.id };
        // Interrupted while it ran: an idempotent tool is simply called again (below, or by the
        // attempt recorded next); anything else may already have taken effect.
        if (!tool.idempotent) return interrupted(call, tool);
      }
      // Durable before the call can take effect.
      writer.callStarted(key.key, tool.name, key.args);
      writer.flushSync();
      return undefined;
    },
    after(_call: ActCall, outcome: ToolOutcome, key: CallKey) {
      attempt(() => {
        writer.callFinished(key.key, outcome);
        writer.flushSync();
      });
    },
    // Buffered: the call's `after` flushes it.
    breaker: (saved) => attempt(() => writer.breaker(saved)),
  };

  const effects = writer.effects;
  return {
    journal,
    ...(effects === undefined ? {} : { effects }),
    record(entry) {
      // Inline rather than through `attempt`: this runs for every event, a closure each is waste.
      try {
        writer.event(entry);
      } catch (error) {
        failure ??= error;
      }
    },
    reply(record) {
      attempt(() => writer.reply(record));
    },
    checkpoint(iteration, take) {
      if (writer.checkpointDue(iteration)) attempt(() => writer.checkpoint(take()));
    },
    onPhase(phase) {
      if (phase === lastPhase) return;
      const previous = lastPhase;
      lastPhase = phase;
      // A wait for a human may last: what led to it is written first.
      if (phase === 'awaitingHuman') {
        attempt(() => writer.flushSync());
        attempt(() => writer.setStatus('awaiting_human'));
      } else if (previous === 'awaitingHuman') attempt(() => writer.setStatus('running'));
    },
    onLost: (listener) => writer.onLost(listener),
    async finish(reason, ending) {
      try {
        writer.end(reason, ending);
      } catch (error) {
        failure ??= error;
      } finally {
        await writer.close().catch((error: unknown) => {
          failure ??= error;
        });
      }
      if (failure !== undefined) console.warn(`[actorloop] run ${writer.runId}: persisting failed:`, failure);
    },
  };
}

function interrupted(call: ActCall, tool: Tool): ToolOutcome {
  return {
    toolCallId: call.call.id,
    tool: call.call.name,
    status: 'escalate',
    content:
      `"${tool.name}" was running when the run was interrupted and is not idempotent: it may already have taken effect. ` +
      'A human must approve running it again.',
    isError: true,
  };
}
