/** Each tool call is recorded durably before it runs and again when it ends, so a crash loses only work that led to none. */
import type { ActCall, EffectLedger, ToolOutcome } from '../core/run.ts';
import type { JournalEntry, TerminationReason } from '../core/loopEvent.ts';
import type { CallKey } from '../executor/callKey.ts';
import type { CallJournal } from '../executor/executor.ts';
import type { CallAttempt, RecordedCalls } from '../persistence/recover.ts';
import type { CheckpointData, ReplyRecord, RunEnding, RunWriter } from '../persistence/runWriter.ts';
import type { Tool } from '../tools/types.ts';

export interface RunPersistence {
  /** Absent for a journal-only run. */
  readonly journal?: CallJournal;
  readonly effects?: EffectLedger;
  record(entry: JournalEntry): void;
  reply(record: ReplyRecord): void;
  onPhase(phase: string): void;
  /** A live run enters `iteration`'s reason phase: writes `take`'s checkpoint when the store's policy wants one. */
  checkpoint(iteration: number, take: () => CheckpointData): void;
  onLost(listener: (reason: string) => void): void;
  /** Never rejects. */
  finish(reason: TerminationReason, ending: RunEnding): Promise<void>;
}

export function createRunPersistence(writer: RunWriter, recorded?: RecordedCalls): RunPersistence {
  return writer.journalOnly ? journalPersistence(writer) : resumablePersistence(writer, recorded);
}

/** The journal only: buffered and written in the background at phase changes, so the loop never waits for the disk. */
function journalPersistence(writer: RunWriter): RunPersistence {
  let lastPhase: string | undefined;
  let failure: unknown;
  const fail = (error: unknown): void => {
    failure ??= error;
  };
  /** A pending background write takes everything recorded until it ends. */
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
    },
    checkpoint() {
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
        // Interrupted while it ran: an idempotent tool is called again; anything else may have taken effect.
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
