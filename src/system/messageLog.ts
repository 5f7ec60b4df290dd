/**
 * Writes `agent.message` entries — who told, asked or delegated what to whom — into the journals
 * of both agents and onto the system stream, so a conversation between agents can be read from
 * either side.
 *
 * A message that belongs to a live run goes through `agent.record`: it gets the run's next
 * sequence number, is persisted with the run, and appears on the agent's own `events$`. A
 * message for a run that has not started yet (the receiving side of a tell, ask or delegation)
 * or has just ended (a reply) goes straight into `agent.journal` and onto the system stream,
 * with the `sequence` of the run's latest entry (0 before the run starts) — insertion order,
 * which the journal keeps, is the exact order. Where a run's journal ends is tracked from the entries the
 * system forwards ({@link RunPositions}), so placing a message never scans a journal.
 */
import type { JournalEntry, LoopEventOf } from '../core/loopEvent.ts';
import type { MemoryJournal } from '../events/memoryJournal.ts';

export type MessageKind = LoopEventOf<'agent.message'>['kind'];

/** Where a run's journal currently ends. */
export interface RunPosition {
  readonly sequence: number;
  readonly iteration: number;
}

/**
 * The latest position of every live run, and of the most recently ended ones (replies are
 * recorded just after a run ends). Bounded: ended runs beyond `endedCapacity` are forgotten,
 * and a forgotten run falls back to a scan of its journal.
 *
 * @example
 * ```ts
 * const positions = new RunPositions();
 * agent.events$.subscribe((entry) => positions.observe(entry));
 * positions.get('run_1'); // { sequence: 7, iteration: 2 } or undefined
 * ```
 */
export class RunPositions {
  readonly #live = new Map<string, RunPosition>();
  readonly #ended = new Map<string, RunPosition>();

  constructor(readonly endedCapacity = 1_024) {}

  observe(entry: JournalEntry): void {
    // Message entries reuse the run's latest sequence; they never move its end.
    if (entry.event.type === 'agent.message') return;
    const position = { sequence: entry.sequence, iteration: entry.iteration };
    if (entry.event.type !== 'run.terminated') {
      this.#live.set(entry.runId, position);
      return;
    }
    this.#live.delete(entry.runId);
    this.#ended.set(entry.runId, position);
    if (this.#ended.size > this.endedCapacity) {
      const oldest = this.#ended.keys().next();
      if (oldest.done !== true) this.#ended.delete(oldest.value);
    }
  }

  get(runId: string): RunPosition | undefined {
    return this.#live.get(runId) ?? this.#ended.get(runId);
  }
}

/** One side of a message: the agent whose journal gets the entry, and the run it belongs to. */
export interface MessageSide {
  readonly agentId: string;
  readonly journal: MemoryJournal;
  readonly runId: string;
  /** Where that run's journal ends; `fresh` for a run that has not started (nothing to look up). */
  readonly position?: RunPosition | 'fresh';
  /**
   * Emits into the run itself when it is live (numbered, persisted, on the agent's own `events$`,
   * and from there on the system stream); returns false when it is not.
   */
  readonly record?: (event: LoopEventOf<'agent.message'>) => boolean;
}

/**
 * The entry for `side`, placed at `position` (the latest entry of its run), or — for a run not
 * tracked — after the latest entry its journal holds (0 for a run that has not started).
 *
 * @example
 * ```ts
 * const entry = messageEntry(side, { type: 'agent.message', from: 'a', to: 'b', kind: 'tell', correlationId: 'msg_1' });
 * ```
 */
export function messageEntry(side: MessageSide, event: LoopEventOf<'agent.message'>, position?: RunPosition): JournalEntry {
  const at = position ?? side.journal.last(side.runId);
  return {
    sequence: at?.sequence ?? 0,
    timestamp: Date.now(),
    agentId: side.agentId,
    runId: side.runId,
    iteration: at?.iteration ?? 0,
    event,
  };
}

/**
 * Record one message on every side given (the same agent once), publishing each entry.
 *
 * @example
 * ```ts
 * recordMessage([senderSide, receiverSide], { from: 'a', to: 'b', kind: 'ask', correlationId }, (e) => subject.next(e));
 * ```
 */
export function recordMessage(
  sides: readonly (MessageSide | undefined)[],
  message: { readonly from: string; readonly to: string; readonly kind: MessageKind; readonly correlationId: string; readonly runId?: string },
  publish: (entry: JournalEntry) => void,
): void {
  const seen = new Set<string>();
  for (const side of sides) {
    if (side === undefined || seen.has(side.agentId)) continue;
    seen.add(side.agentId);
    const event: LoopEventOf<'agent.message'> = { type: 'agent.message', ...message };
    if (side.position !== 'fresh' && side.record?.(event) === true) continue;
    const position = side.position === 'fresh' ? { sequence: 0, iteration: 0 } : side.position;
    const entry = messageEntry(side, event, position);
    side.journal.write(entry);
    publish(entry);
  }
}
