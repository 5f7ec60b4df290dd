import { describe, expect, it } from 'vitest';
import { ConfigurationError, createAgent, strategies } from '../../src/index.ts';
import { scriptedModel } from '../../src/testing/index.ts';

describe('createAgent with a strategy', () => {
  it('runs the strategy through agent.run, branches as sub-agents of the same config', async () => {
    let sample = 0;
    // Every sub-agent shares this scripted model; three samples answer 42, 42 and 41.
    const model = scriptedModel(() => ({ text: ['42', '42', '41'][sample++ % 3] as string }));
    const agent = createAgent({ model, strategy: strategies.vote({ samples: 3 }) });
    const seen: string[] = [];
    agent.events$.subscribe(({ event }) => seen.push(event.type));
    const result = await agent.run('What is 6 * 7?');
    expect(result.status).toBe('done');
    expect(result.text).toBe('42');
    expect(model.calls.length).toBe(3);
    expect(seen).toContain('strategy.decided');
    expect(seen.filter((t) => t === 'branch.finished')).toHaveLength(3);
  });

  it('refuses start() with a strategy and says what to use instead', () => {
    const agent = createAgent({ model: scriptedModel([]), strategy: strategies.chain() });
    expect(() => agent.start('x')).toThrow(ConfigurationError);
  });
});
