/**
 * A resumed machine starts again from its last checkpoint (or its input) and is fed the phase replies
 * and human decisions it took after that; tool calls are answered from their `call.finished` records.
 */
import type { ToolOutcome } from '../core/run.ts';
import type { SavedBreaker } from '../resilience/circuitBreaker.ts';
import { withConversation } from './checkpointLog.ts';
import { CorruptFileError } from './errors.ts';
import type { CheckpointRecord, LogRecord, ReplayRecord, RunInput, RunMeta } from './records.ts';
import { defined } from '../core/defined.ts';

/** No outcome: the run was interrupted while it ran (it may have taken effect). A key can have several. */
export interface CallAttempt {
  readonly tool: string;
  readonly outcome?: ToolOutcome;
}

export interface RecordedCalls {
  readonly attempts: ReadonlyMap<string, readonly CallAttempt[]>;
}

export interface RecoveredRun {
  readonly meta: RunMeta;
  /** Absent when the run was killed before its `start` record landed. */
  readonly input?: RunInput;
  /** Its conversation whole; `replay`, `calls` and `eventCounts` hold only what was recorded after it. */
  readonly checkpoint?: CheckpointRecord;
  readonly read?: { readonly records: number; readonly bytes: number };
  readonly replay: readonly ReplayRecord[];
  readonly calls: RecordedCalls;
  readonly nextSequence: number;
  readonly eventCounts: ReadonlyMap<string, number>;
  readonly warnings: readonly string[];
  /** A durable run's next step, not an interruption: no `run.resumed` entry. */
  readonly continued?: true;
  readonly breakers?: readonly SavedBreaker[];
}

/** Without `start` (killed before anything but its header landed) the run starts over from its task. */
export function recover(records: readonly LogRecord[], meta: RunMeta, warnings: string[], file: string): RecoveredRun {
  let checkpoint: CheckpointRecord | undefined;
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
        checkpoints.set(record.index, record);
        checkpoint = record;
        replay = [];
        attempts.clear();
        eventCounts.clear();
        nextSequence = record.sequence;
        // Later records supersede the checkpoint's breaker states.
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
    ...defined({ input, checkpoint: whole }),
    replay,
    calls: { attempts },
    nextSequence,
    eventCounts,
    warnings,
    ...(breakers.size === 0 ? {} : { breakers: [...breakers.values()] }),
  };
}
