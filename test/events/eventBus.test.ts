import { describe, expect, it } from 'vitest';
import type { JournalEntry } from '../../src/core/loopEvent.ts';
import { EventBus } from '../../src/events/eventBus.ts';

let sequence = 0;
const entry = (runId: string): JournalEntry => ({ sequence: sequence++, timestamp: 0, agentId: 'a', runId, iteration: 0, event: { type: 'token.delta', delta: runId } });

describe("a run's own feed on the event bus", () => {
  it('delivers only its run’s entries published after the subscription, to each of its subscribers', () => {
    const bus = new EventBus();
    bus.publish(entry('r1'));
    const first: string[] = [];
    const second: string[] = [];
    const other: string[] = [];
    bus.run$('r1').subscribe((e) => first.push(e.runId));
    bus.run$('r1').subscribe((e) => second.push(e.runId));
    bus.run$('r2').subscribe((e) => other.push(e.runId));
    bus.publish(entry('r1'));
    bus.publish(entry('r3'));
    bus.publish(entry('r2'));
    bus.publish(entry('r1'));
    expect(first).toEqual(['r1', 'r1']);
    expect(second).toEqual(['r1', 'r1']);
    expect(other).toEqual(['r2']);
  });

  it('keeps delivering after every subscriber left and a new one came, and to the rest when one leaves mid-delivery', () => {
    const bus = new EventBus();
    const seen: number[] = [];
    bus.run$('r').subscribe().unsubscribe();
    bus.publish(entry('r'));
    const leaving = bus.run$('r').subscribe(() => leaving.unsubscribe());
    bus.run$('r').subscribe((e) => seen.push(e.sequence));
    const a = entry('r');
    const b = entry('r');
    bus.publish(a);
    bus.publish(b);
    expect(seen).toEqual([a.sequence, b.sequence]);
    expect(leaving.closed).toBe(true);
  });

  it('serves the same entries as filtering events$ by run, in the same order', () => {
    const bus = new EventBus();
    const filtered: number[] = [];
    const own: number[] = [];
    bus.events$.subscribe((e) => {
      if (e.runId === 'x') filtered.push(e.sequence);
    });
    bus.run$('x').subscribe((e) => own.push(e.sequence));
    for (let i = 0; i < 50; i++) bus.publish(entry(i % 3 === 0 ? 'x' : `y${i}`));
    expect(own).toEqual(filtered);
    expect(own).toHaveLength(17);
  });
});
