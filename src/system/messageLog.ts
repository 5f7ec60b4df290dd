// A message goes into both agents' journals, so a conversation reads from either side. One for a run not
// live (not started, or just ended) reuses the run's latest sequence: the journal's insertion order is exact.
import type { JournalEntry, LoopEventOf } from '../core/loopEvent.ts';
import type { MemoryJournal } from '../events/memoryJournal.ts';

export type MessageKind = LoopEventOf<'agent.message'>['kind'];

export interface RunPosition {
  readonly sequence: number;
  readonly iteration: number;
}

/** Tracked from forwarded entries so placing a message never scans a journal; recently ended runs are kept for their replies. */
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

export interface MessageSide {
  readonly agentId: string;
  readonly journal: MemoryJournal;
  readonly runId: string;
  readonly position?: RunPosition | 'fresh';
  readonly record?: (event: LoopEventOf<'agent.message'>) => boolean;
}

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
