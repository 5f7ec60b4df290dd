import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent, defineTool, ofType } from '../../src/index.ts';
import { scriptedModel } from '../../src/testing/index.ts';

const echo = defineTool({ name: 'echo', description: 'Echo', input: z.object({ v: z.number() }), execute: ({ v }) => v });
const script = () =>
  scriptedModel([
    { toolCalls: [{ id: 'a', name: 'echo', arguments: { v: 1 } }] },
    { toolCalls: [{ id: 'b', name: 'echo', arguments: { v: 2 } }] },
    { text: 'done' },
  ]);

describe('event subscribers', () => {
  it('a slow asynchronous subscriber does not hold the loop up', async () => {
    const agent = createAgent({ model: script(), tools: [echo] });
    let handled = 0;
    agent.events$.subscribe(async () => {
      await new Promise((resolve) => setTimeout(resolve, 200));
      handled++;
    });
    const started = performance.now();
    const result = await agent.run('go');
    const elapsed = performance.now() - started;
    expect(result.status).toBe('done');
    // About 25 events at 200 ms each would take 5 s if the loop waited; it does not.
    expect(elapsed).toBeLessThan(1_000);
    expect(handled).toBe(0);
  });

  it('narrows entries by type with ofType and sees them in order', async () => {
    const agent = createAgent({ model: script(), tools: [echo] });
    const finished: string[] = [];
    agent.events$.pipe(ofType('tool.finished')).subscribe(({ event }) => finished.push(event.toolCallId));
    await agent.run('go');
    expect(finished).toEqual(['a', 'b']);
  });

  it("a run's events$ replays the entries emitted before the subscription", async () => {
    const agent = createAgent({ model: script(), tools: [echo] });
    const handle = agent.start('go');
    await handle.settled;
    const seen: string[] = [];
    handle.events$.subscribe(({ event }) => seen.push(event.type));
    expect(seen[0]).toBe('run.started');
    expect(seen.at(-1)).toBe('run.terminated');
    expect(seen).toEqual(agent.journal.entries(handle.runId).map((e) => e.event.type));
  });
});
