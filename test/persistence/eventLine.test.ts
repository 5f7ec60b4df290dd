import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { JournalEntry } from '../../src/events/loopEvent.ts';
import { eventLine } from '../../src/persistence/fileStore.ts';
import { LOG_VERSION } from '../../src/persistence/records.ts';

const idsOf = (runId: string, agentId: string) => ({ runId, agentId, runIdJson: JSON.stringify(runId), agentIdJson: JSON.stringify(agentId) });

describe('event log lines', () => {
  it('are exactly JSON.stringify of the record, for any ids, numbers and event text (property)', () => {
    const text = fc.string({ unit: 'grapheme-composite', maxLength: 40 });
    fc.assert(
      fc.property(
        text,
        text,
        fc.oneof(fc.nat(), fc.double()),
        fc.oneof(fc.nat(), fc.constant(Number.NaN)),
        fc.nat(),
        text,
        (runId, agentId, timestamp, sequence, iteration, task) => {
          const entry = { sequence, timestamp, agentId, runId, iteration, event: { type: 'run.started', task, model: 'm', tools: ['a"b'] } } as JournalEntry;
          const line = eventLine(entry, idsOf(runId, agentId));
          expect(line).toBe(JSON.stringify({ v: LOG_VERSION, kind: 'event', entry }));
          expect(JSON.parse(line)).toEqual(JSON.parse(JSON.stringify({ v: LOG_VERSION, kind: 'event', entry })));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('fall back to JSON.stringify when an entry names another run or agent', () => {
    const entry: JournalEntry = { sequence: 1, timestamp: 2, agentId: 'other', runId: 'r', iteration: 0, event: { type: 'phase.entered', phase: 'act' } };
    expect(JSON.parse(eventLine(entry, idsOf('r', 'me')))).toEqual({ v: LOG_VERSION, kind: 'event', entry });
  });
});
