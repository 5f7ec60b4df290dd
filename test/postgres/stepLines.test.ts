/** A step reads a journal line's sequences from its head, without parsing its events: whatever the ids hold. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { journalLine } from '../../src/persistence/runWriter.ts';
import { journalSequences } from '../../src/postgres/stepStore.ts';

describe('journal lines of a step', () => {
  it('give their sequences read from the head, the same as parsed whole, whatever the run and agent ids and events hold', () => {
    const tricky = fc.constantFrom('"sequence":[9]', '\\"sequence\\":[9', 'sequence":[', '],"sequence":[', '"');
    const text = fc.oneof(fc.string(), tricky, fc.tuple(fc.string(), tricky, fc.string()).map((parts) => parts.join('')));
    fc.assert(
      fc.property(text, text, fc.uniqueArray(fc.nat(), { maxLength: 6 }), text, (runId, agentId, unsorted, delta) => {
        const sequence = [...unsorted].sort((a, b) => a - b);
        const line = journalLine(
          {
            at: 1,
            sequence,
            elapsed: sequence.map(() => 0),
            iteration: sequence.map(() => 0),
            events: sequence.map(() => ({ type: 'token.delta' as const, delta })),
          },
          { runId, agentId, runIdJson: JSON.stringify(runId), agentIdJson: JSON.stringify(agentId) },
        );
        expect(journalSequences(line)).toEqual((JSON.parse(line) as { sequence: number[] }).sequence);
      }),
    );
  });
});
