/**
 * What a resumed run starts from, read from its log. A run is rebuilt: its machine starts again
 * from its last checkpoint (or, without one, from the run's input, `start`) and is fed the phase
 * replies and human decisions it took after that, in order; tool calls are answered from their
 * `call.finished` records.
 */
import type { ToolOutcome } from '../core/run.ts';
import type { SavedBreaker } from '../resilience/circuitBreaker.ts';
import { withConversation } from './checkpointLog.ts';
import { CorruptFileError } from './errors.ts';
import type { CheckpointRecord, LogRecord, ReplayRecord, RunInput, RunMeta } from './records.ts';

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
}

/** What a resumed run starts from. */
export interface RecoveredRun {
  readonly meta: RunMeta;
  /** The run's input: a fresh machine replays `replay` from it. Absent when the run was killed before its `start` record landed. */
  readonly input?: RunInput;
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
  readonly warnings: readonly string[];
  /** The run goes on by design, not after an interruption (a durable run's next step): no `run.resumed` entry. */
  readonly continued?: true;
  /** The latest recorded state of each breaker the run changed, to restore before any tool runs. */
  readonly breakers?: readonly SavedBreaker[];
}

/**
 * Read a run's records into what its resume needs. Without `start` (a run killed before anything
 * but its header was written) the run starts over from its task.
 */
export function recover(records: readonly LogRecord[], meta: RunMeta, warnings: string[], file: string): RecoveredRun {
  let checkpoint: CheckpointRecord | undefined;
  // The checkpoints by index: the last one's conversation is completed from its bases.
  const checkpoints = new Map<number, CheckpointRecord>();
  let input: RunInput | undefined;
  let replay: ReplayRecord[] = [];
  const attempts = new Map<string, CallAttempt[]>();
  let nextSequence = 0;
  const eventCounts = new Map<string, number>();
  const breakers = new Map<string, SavedBreaker>();
  // An elicitation's wait and answer are the runtime's, not the machine's: a replay does not emit them again.
  const count = (event: { type: string; kind?: unknown }): void => {
    const key = event.kind === 'elicitation' ? `${event.type}:elicitation` : event.type;
    eventCounts.set(key, (eventCounts.get(key) ?? 0) + 1);
  };
  for (const record of records) {
    switch (record.kind) {
      case 'checkpoint':
        // What came before is in it: the replay, the calls and the journal count from here.
        checkpoints.set(record.index, record);
        checkpoint = record;
        replay = [];
        attempts.clear();
        eventCounts.clear();
        nextSequence = record.sequence;
        // The checkpoint holds the breakers' states as they were; later records supersede them.
        breakers.clear();
        for (const saved of record.breakers ?? []) breakers.set(saved.tool, saved);
        break;
      case 'breaker': {
        const { v: _v, kind: _kind, ...saved } = record;
        breakers.set(saved.tool, saved);
        break;
      }
      case 'event':
        nextSequence = record.entry.sequence + 1;
        count(record.entry.event);
        break;
      case 'journal': {
        const last = record.events.length - 1;
        if (last >= 0) nextSequence = (record.sequence[last] as number) + 1;
        for (const event of record.events) count(event);
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
    }
  }
  const whole = checkpoint === undefined ? undefined : withConversation(checkpoint, (record) => checkpoints.get(record.index & (record.index - 1)));
  if (typeof whole === 'string') throw new CorruptFileError(`${file}: ${whole}. It was left untouched.`, { file });
  return {
    meta,
    ...(input === undefined ? {} : { input }),
    ...(whole === undefined ? {} : { checkpoint: whole }),
    replay,
    calls: { attempts },
    nextSequence,
    eventCounts,
    warnings,
    ...(breakers.size === 0 ? {} : { breakers: [...breakers.values()] }),
  };
}
