/**
 * What a resumed run starts from, read from its log. A run written by this version is rebuilt:
 * its machine starts again from its last checkpoint (or, without one, from the run's input,
 * `start`) and is fed the phase replies and human decisions it took after that, in order; tool
 * calls are answered from their `call.finished` records. A run written by an earlier version
 * (snapshots) is restored from its last snapshot, and whatever this version recorded after it is
 * replayed on top.
 */
import type { ToolOutcome } from '../core/run.ts';
import type { Message } from '../core/messages.ts';
import { withConversation } from './checkpointLog.ts';
import { CorruptFileError } from './errors.ts';
import type { CheckpointRecord, LogRecord, ReplayRecord, RunInput, RunMeta } from './records.ts';
import { applyContextDelta, unpackSnapshot } from './snapshotCodec.ts';

/**
 * One time a call was made: its outcome, or none when the run was interrupted while it ran (it
 * may have taken effect). A call is made again after an escalation or an interruption, so a key
 * can have several, in order.
 */
export interface CallAttempt {
  readonly tool: string;
  readonly outcome?: ToolOutcome;
}

/** The tool calls a run recorded, for the executor to answer from instead of calling again. */
export interface RecordedCalls {
  /** Attempts by call key. */
  readonly attempts: ReadonlyMap<string, readonly CallAttempt[]>;
  /**
   * Version 5 records written after the restored snapshot, by the provider's call id (the only
   * key they had): the calls of the act phase the snapshot restores into.
   */
  readonly legacy: ReadonlyMap<string, CallAttempt>;
}

/** What a resumed run starts from. */
export interface RecoveredRun {
  readonly meta: RunMeta;
  /** The run's input: a fresh machine replays `replay` from it. Absent in logs of earlier versions. */
  readonly input?: RunInput;
  /** A machine snapshot (conversation included) written by an earlier version: restored, then `replay` continues from it. */
  readonly snapshot?: Record<string, unknown>;
  /**
   * The log's last checkpoint, its conversation whole: the run is restored from it, and
   * `replay`, `calls` and `eventCounts` hold only what was recorded after it.
   */
  readonly checkpoint?: CheckpointRecord;
  /** What the store read of the log to resume the run, where it counts that. */
  readonly read?: { readonly records: number; readonly bytes: number };
  /** Phase replies and human decisions to feed the machine again, in the order it took them. */
  readonly replay: readonly ReplayRecord[];
  readonly calls: RecordedCalls;
  readonly nextSequence: number;
  /** How many journaled events there are of each type. */
  readonly eventCounts: ReadonlyMap<string, number>;
  /** The iteration of the last journal entry. */
  readonly iteration: number;
  readonly warnings: readonly string[];
  /** The run goes on by design, not after an interruption (a durable run's next step): no `run.resumed` entry. */
  readonly continued?: true;
}

/**
 * Read a run's records into what its resume needs. Neither `start` nor a snapshot (a run killed
 * before anything but its header was written) leaves both absent: the run starts over from its
 * task.
 */
export function recover(records: readonly LogRecord[], meta: RunMeta, warnings: string[], file: string): RecoveredRun {
  const messages: Message[] = [];
  let snapshot: { packed: Record<string, unknown>; messageCount: number } | undefined;
  let checkpoint: CheckpointRecord | undefined;
  // The checkpoints by index: the last one's conversation is completed from its bases.
  const checkpoints = new Map<number, CheckpointRecord>();
  let input: RunInput | undefined;
  let replay: ReplayRecord[] = [];
  const attempts = new Map<string, CallAttempt[]>();
  let legacy = new Map<string, CallAttempt>();
  const legacyPrefix = `${meta.runId}:`;
  let nextSequence = 0;
  let iteration = 0;
  const eventCounts = new Map<string, number>();
  const count = (type: string): void => void eventCounts.set(type, (eventCounts.get(type) ?? 0) + 1);
  for (const record of records) {
    switch (record.kind) {
      case 'event':
        nextSequence = record.entry.sequence + 1;
        iteration = record.entry.iteration;
        count(record.entry.event.type);
        break;
      case 'journal': {
        const last = record.events.length - 1;
        if (last >= 0) [nextSequence, iteration] = [(record.sequence[last] as number) + 1, record.iteration[last] as number];
        for (const event of record.events) count(event.type);
        break;
      }
      case 'events': {
        const last = record.entries.at(-1);
        if (last !== undefined) [nextSequence, iteration] = [last[0] + 1, last[2]];
        for (const entry of record.entries) count(entry[3].type);
        break;
      }
      case 'start':
        input = record.input;
        break;
      case 'hydrate':
      case 'reason':
      case 'gate':
      case 'human':
        replay.push(record);
        break;
      case 'call.started': {
        const made = attempts.get(record.key);
        if (made === undefined) attempts.set(record.key, [{ tool: record.tool }]);
        else made.push({ tool: record.tool });
        break;
      }
      case 'call.finished': {
        // It finishes the attempt its `call.started` opened.
        const made = attempts.get(record.key);
        const open = made?.at(-1);
        const attempt = { tool: record.outcome.tool, outcome: record.outcome };
        if (made === undefined) attempts.set(record.key, [attempt]);
        else if (open !== undefined && open.outcome === undefined) made[made.length - 1] = attempt;
        else made.push(attempt);
        break;
      }
      case 'checkpoint':
        // What came before is in it: the replay, the calls and the journal count from here.
        checkpoints.set(record.index, record);
        checkpoint = record;
        replay = [];
        attempts.clear();
        eventCounts.clear();
        nextSequence = record.sequence;
        iteration = record.iteration;
        break;
      case 'messages':
        messages.length = Math.min(messages.length, record.from);
        for (const m of record.messages) messages.push(m);
        break;
      case 'snapshot':
        if (record.delta === true && snapshot === undefined) {
          throw new CorruptFileError(`${file}: a snapshot delta has no snapshot before it. It was left untouched.`, { file });
        }
        snapshot = {
          packed: record.delta === true && snapshot !== undefined ? applyContextDelta(snapshot.packed, record.snapshot) : record.snapshot,
          messageCount: record.messageCount,
        };
        // Everything before a snapshot is in it.
        replay = [];
        legacy = new Map();
        break;
      case 'tool_started':
        if (record.key.startsWith(legacyPrefix)) legacy.set(record.key.slice(legacyPrefix.length), { tool: record.tool });
        break;
      case 'tool_result':
        if (record.key.startsWith(legacyPrefix)) legacy.set(record.key.slice(legacyPrefix.length), { tool: record.outcome.tool, outcome: record.outcome });
        break;
    }
  }
  const whole = checkpoint === undefined ? undefined : withConversation(checkpoint, (record) => checkpoints.get(record.index & (record.index - 1)));
  if (typeof whole === 'string') throw new CorruptFileError(`${file}: ${whole}. It was left untouched.`, { file });
  return {
    meta,
    ...(input === undefined ? {} : { input }),
    ...(snapshot === undefined ? {} : { snapshot: unpackSnapshot(snapshot.packed, messages.slice(0, snapshot.messageCount)) }),
    ...(whole === undefined ? {} : { checkpoint: whole }),
    replay,
    calls: { attempts, legacy },
    nextSequence,
    eventCounts,
    iteration,
    warnings,
  };
}
