import { describe, expect, it } from 'vitest';
import { parseInspectionRecording } from '../../src/inspect/index.ts';

const record = (seq: number, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ v: 1, seq, time: 1, type: '@xstate.event', rootId: 'x:0', actorId: 'x:0', sessionId: 'x:0', event: { type: 'go' }, ...extra });

describe('parseInspectionRecording', () => {
  it('parses every valid line and lists a torn last line instead of throwing', () => {
    const text = `${record(0)}\n${record(1)}\n${record(2).slice(0, 30)}`;
    const { records, invalidLines } = parseInspectionRecording(text);
    expect(records.map((r) => r.seq)).toEqual([0, 1]);
    expect(invalidLines).toEqual([3]);
  });

  it('rejects records of a future schema version or an unknown type', () => {
    const text = [record(0, { v: 2 }), record(1, { type: '@xstate.teleport' }), '', record(2)].join('\n');
    const { records, invalidLines } = parseInspectionRecording(text);
    expect(records.map((r) => r.seq)).toEqual([2]);
    expect(invalidLines).toEqual([1, 2]);
  });

  it('drops __proto__ keys so reading a hostile file cannot pollute prototypes', () => {
    const hostile = record(0).replace('"event":{"type":"go"}', '"event":{"type":"go","__proto__":{"polluted":true}},"__proto__":{"polluted":true}');
    const { records } = parseInspectionRecording(hostile);
    expect(records).toHaveLength(1);
    const copy = Object.assign({}, records[0], records[0]?.event);
    expect((copy as Record<string, unknown>)['polluted']).toBeUndefined();
    expect(Object.keys(records[0]?.event as object)).toEqual(['type']);
  });
});
