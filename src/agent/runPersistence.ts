/**
 * What a persisted run does at each boundary: journal entries are buffered; when the machine
 * settles in a new phase its snapshot is recorded and everything is flushed; tool outcomes are
 * recorded (and flushed) the moment they exist, so a resumed run never runs a completed call
 * again, and a call that may have taken effect is not re-run blindly.
 */
import type { ActCall, ToolOutcome } from '../../machines/agent.types.ts';
import type { Message } from '../conversation/messages.ts';
import type { JournalEntry, TerminationReason } from '../events/loopEvent.ts';
import type { CallJournal } from '../executor/executor.ts';
import type { RecoveredRun, RunWriter } from '../persistence/fileStore.ts';
import type { Tool } from '../tools/types.ts';

export interface RunPersistence {
  /** The executor's durability hooks; absent for a journal-only run (nothing to resume, nothing to replay). */
  readonly journal?: CallJournal;
  record(entry: JournalEntry): void;
  /** Call on every snapshot; persists when the phase changed. */
  onSnapshot(phase: string, persisted: () => unknown, messages: readonly Message[]): void;
  /** Persist the final state, set the status and release the run. Never rejects. */
  finish(reason: TerminationReason, persisted: () => unknown, messages: readonly Message[]): Promise<void>;
}

/** What the run's writer asks for: everything a resume needs, or (journal-only store) the journal. */
export function createRunPersistence(writer: RunWriter, recovered?: RecoveredRun): RunPersistence {
  return writer.journalOnly ? journalPersistence(writer) : resumablePersistence(writer, recovered);
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
    onSnapshot(phase) {
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
    async finish(reason) {
      try {
        writer.end(reason);
      } catch (error) {
        fail(error);
      } finally {
        await writer.close().catch(fail);
      }
      if (failure !== undefined) console.warn(`[actorloop] run ${writer.runId}: writing the journal failed:`, failure);
    },
  };
}

function resumablePersistence(writer: RunWriter, recovered?: RecoveredRun): RunPersistence {
  const toolResults = new Map(recovered?.toolResults);
  const startedTools = new Set(recovered?.startedTools);
  const startedNonIdempotent = new Set<string>();
  let lastPhase: string | undefined;
  let lastSnapshotPhase: string | undefined;
  let failure: unknown;
  const guard = (work: Promise<void>): void => {
    // A failing disk must not crash the host; the first failure is reported when the run ends.
    work.catch((error: unknown) => {
      failure ??= error;
    });
  };

  const attempt = (work: () => void): void => {
    try {
      work();
    } catch (error) {
      failure ??= error;
    }
  };

  const journal: CallJournal = {
    before(call: ActCall, tool: Tool, key: string) {
      const done = toolResults.get(key);
      if (done !== undefined) return done;
      if (startedTools.delete(key) && !tool.idempotent) {
        return {
          toolCallId: call.call.id,
          tool: call.call.name,
          status: 'escalate',
          content:
            `"${tool.name}" was running when the run was interrupted and is not idempotent: it may already have taken effect. ` +
            'A human must approve running it again.',
          isError: true,
        } satisfies ToolOutcome;
      }
      if (!tool.idempotent) {
        // Durable before the side effect: after a crash we know this call may have run.
        startedNonIdempotent.add(key);
        writer.toolStarted(key, tool.name);
        return writer.flush().then(() => undefined);
      }
      return undefined;
    },
    after(call: ActCall, outcome: ToolOutcome, key: string) {
      toolResults.set(key, outcome);
      attempt(() => writer.toolResult(key, outcome));
      // The phase boundary after `act` flushes every result before the loop moves on. A
      // non-idempotent call's result is flushed at once: losing it would mean asking a human.
      return startedNonIdempotent.delete(key) ? writer.flush() : undefined;
    },
  };

  return {
    journal,
    record(entry) {
      // Inline rather than through `attempt`: this runs for every event, a closure each is waste.
      try {
        writer.event(entry);
      } catch (error) {
        failure ??= error;
      }
    },
    onSnapshot(phase, persisted, messages) {
      if (phase === lastPhase) return;
      const previous = lastPhase;
      lastPhase = phase;
      // One snapshot per iteration, taken in `gate` (the model has replied, no tool has run).
      // `act` and the next `reason` need none: restored from `gate`, the gate re-runs (no I/O),
      // the executor replays every recorded result instead of running a call again, and the
      // loop reaches `reason` exactly as before. Their records are still flushed here.
      if (phase === 'act') return;
      if (phase === 'reason' && lastSnapshotPhase === 'gate') {
        guard(writer.flush());
        return;
      }
      lastSnapshotPhase = phase;
      attempt(() => writer.snapshot(persisted(), messages));
      guard(writer.flush());
      if (phase === 'awaitingHuman') attempt(() => writer.setStatus('awaiting_human'));
      else if (previous === 'awaitingHuman') attempt(() => writer.setStatus('running'));
    },
    async finish(reason, persisted, messages) {
      try {
        writer.snapshot(persisted(), messages);
        writer.end(reason);
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
