import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { createAgent, createFileStore, defineTool, gates, type AgentConfig, type JournalEntry } from '../../src/index.ts';
import { ConfigurationError } from '../../src/core/errors.ts';
import { DEFAULTS } from '../../src/core/defaults.ts';
import { resolveConfig } from '../../src/agent/config.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { removeTempDirs, tempDir } from '../persistence/support.ts';
import { stopTrackedAgents, trackAgent } from '../support/agents.ts';

afterEach(stopTrackedAgents);
afterAll(removeTempDirs);

const echo = (executed: string[] = []) =>
  defineTool({ name: 'echo', description: 'Echo', input: z.object({ v: z.string() }), execute: ({ v }) => (executed.push(v), v) });
const echoOnce = () => scriptedModel([{ toolCalls: [{ id: 'c1', name: 'echo', arguments: { v: 'hi' } }] }, { text: 'done' }]);

/** Build an agent from a config TypeScript would refuse (an old flat config, a config of the wrong kind). */
const createUntyped = (config: unknown) => createAgent(config as AgentConfig);

describe('the grouped config takes effect', () => {
  it('sends model.name, model.temperature and model.maxTokens with every call', async () => {
    const provider = scriptedModel([{ toolCalls: [{ name: 'echo', arguments: { v: 'x' } }] }, { text: 'ok' }]);
    const agent = trackAgent({ model: { provider, name: 'tiny-model', temperature: 0.25, maxTokens: 64 }, tools: [echo()] });
    const result = await agent.run('go');
    expect(provider.calls).toHaveLength(2);
    for (const call of provider.calls) expect(call).toMatchObject({ model: 'tiny-model', temperature: 0.25, maxTokens: 64 });
    // The run's recorded model is the configured name, not the provider's default.
    expect(agent.journal.entries(result.runId)[0]?.event).toMatchObject({ type: 'run.started', model: 'tiny-model' });
  });

  it('streams with model.stream: deltas arrive on tokens$', async () => {
    const provider = scriptedModel([{ chunks: ['Hello ', 'world'] }]);
    const agent = trackAgent({ model: { provider, stream: true } });
    const tokens: string[] = [];
    agent.tokens$.subscribe(({ delta }) => tokens.push(delta));
    expect(await agent.run('greet')).toMatchObject({ text: 'Hello world' });
    expect(tokens).toEqual(['Hello ', 'world']);
  });

  it("ends a run whose provider's stream stops without its done event with stream_interrupted, after what it streamed", async () => {
    const provider = { ...scriptedModel([{ text: 'unused' }]), async *stream() { yield { type: 'text.delta' as const, delta: 'Half a ' }; yield { type: 'text.delta' as const, delta: 'reply' }; } };
    const agent = trackAgent({ model: { provider, stream: true } });
    const tokens: string[] = [];
    agent.tokens$.subscribe(({ delta }) => tokens.push(delta));
    const result = await agent.start('greet').settled;
    expect(result).toMatchObject({ status: 'failed', error: { code: 'stream_interrupted' } });
    expect(tokens.join('')).toBe('Half a reply');
  });

  it('takes a bare provider as shorthand for { provider }: its default model, no sampling settings, no streaming', async () => {
    const provider = scriptedModel([{ chunks: ['a', 'b'] }]);
    const agent = trackAgent({ model: provider });
    const tokens: string[] = [];
    agent.tokens$.subscribe(({ delta }) => tokens.push(delta));
    expect(await agent.run('go')).toMatchObject({ status: 'done', text: 'ab' });
    expect(tokens).toEqual([]);
    const call = provider.calls[0];
    expect(call?.model).toBeUndefined();
    expect(call?.temperature).toBeUndefined();
    expect(call?.maxTokens).toBeUndefined();
  });

  it('denies calls through policy.gate', async () => {
    const executed: string[] = [];
    const model = echoOnce();
    const agent = trackAgent({ model, tools: [echo(executed)], policy: { gate: gates.rules({ deny: ['echo'] }) } });
    await agent.run('echo hi');
    expect(executed).toEqual([]);
    const observation = model.calls[1]?.messages.find((m) => m.role === 'tool');
    expect(observation?.content).toMatch(/^Denied by policy/);
  });

  it('hides tools with policy.toolProfile and scrubs policy.redact secrets', async () => {
    const model = scriptedModel([{ text: 'the code is swordfish-42' }]);
    const agent = trackAgent({ model, tools: [echo()], policy: { toolProfile: { exclude: ['echo'] }, redact: { secrets: ['swordfish-42'] } } });
    const result = await agent.run('go');
    expect(model.calls[0]?.tools ?? []).toEqual([]);
    expect(JSON.stringify(agent.journal.entries(result.runId))).not.toContain('swordfish-42');
  });

  it('delivers every journal entry to observe.events, from the first run on', async () => {
    const seen: JournalEntry[] = [];
    const agent = trackAgent({ model: scriptedModel([{ text: 'one' }, { text: 'two' }]), observe: { events: (entry) => seen.push(entry) } });
    const first = await agent.run('a');
    const second = await agent.run('b');
    expect(seen.map((e) => e.sequence + e.runId)).toEqual([...agent.journal.entries(first.runId), ...agent.journal.entries(second.runId)].map((e) => e.sequence + e.runId));
    expect(seen[0]?.event.type).toBe('run.started');
    expect(seen.at(-1)?.event.type).toBe('run.terminated');
  });

  it('takes an observer object for observe.events too', async () => {
    const types: string[] = [];
    const agent = trackAgent({ model: scriptedModel([{ text: 'ok' }]), observe: { events: { next: (entry) => types.push(entry.event.type) } } });
    await agent.run('go');
    expect(types).toContain('run.terminated');
  });

  it('survives an observe.events handler that throws on each of 10 events: the run finishes and one line reports it', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      let thrown = 0;
      const echoTool = echo();
      const agent = trackAgent({
        model: scriptedModel([{ toolCalls: [{ name: 'echo', arguments: { v: 'a' } }] }, { toolCalls: [{ name: 'echo', arguments: { v: 'b' } }] }, { text: 'fine' }]),
        tools: [echoTool],
        observe: {
          events: () => {
            thrown++;
            throw new Error('handler bug');
          },
        },
      });
      await expect(agent.run('go')).resolves.toMatchObject({ status: 'done', text: 'fine' });
      expect(thrown).toBeGreaterThanOrEqual(10);
      // Anything RxJS would report goes through a timer: let one pass before counting.
      await new Promise((resolve) => setTimeout(resolve, 0));
      expect(warn.mock.calls).toEqual([
        ['[actorloop] the observe.events handler threw Error: handler bug (the run continues; further errors from it are not reported)'],
      ]);
    } finally {
      warn.mockRestore();
    }
  });

  it('keeps runs in persistence.store', async () => {
    const store = createFileStore({ dir: tempDir() });
    const agent = trackAgent({ model: scriptedModel([{ text: 'kept' }]), persistence: { store } });
    const result = await agent.run('remember this', { runId: 'run_kept' });
    expect(result.text).toBe('kept');
    expect(await store.getRun('run_kept')).toMatchObject({ runId: 'run_kept', status: 'done' });
  });

  it('resume() without persistence.store says where the store goes', () => {
    const agent = trackAgent({ model: scriptedModel([{ text: 'x' }]) });
    expect(() => agent.resume('run_x')).toThrow(/persistence: \{ store/);
  });

  it('applies context.budget to what the model sees', async () => {
    let n = 0;
    const big = defineTool({ name: 'big', description: 'Big', input: z.object({}), execute: () => 'x'.repeat(4_000) });
    const model = scriptedModel((request) =>
      request.messages.filter((m) => m.role === 'tool').length >= 8 || n > 30 ? { text: 'done' } : { toolCalls: [{ id: `c${n++}`, name: 'big', arguments: {} }] },
    );
    // Repeats one call on purpose, to fill the context: stuck detection would end the run first.
    const agent = trackAgent({ model, tools: [big], context: { budget: { tokenBudget: 3_000, strategy: 'slidingWindow' } }, limits: { maxIterations: 40 }, resilience: { stuckDetection: false } });
    const compacted: number[] = [];
    agent.events$.subscribe(({ event }) => event.type === 'context.compacted' && compacted.push(event.tokensAfter));
    await agent.run('go');
    expect(compacted.length).toBeGreaterThan(0);
    for (const tokens of compacted) expect(tokens).toBeLessThanOrEqual(3_000);
  });

  it('applies resilience.tools, resilience.breakers and observe.journalCapacity', async () => {
    const slow = defineTool({
      name: 'slow',
      description: 'Slow',
      input: z.object({}),
      execute: (_input, { signal }) => new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => resolve('late'), 5_000);
        signal.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason)));
      }),
    });
    const model = scriptedModel([{ toolCalls: [{ id: 's1', name: 'slow', arguments: {} }] }, { text: 'gave up' }]);
    const agent = trackAgent({ model, tools: [slow], resilience: { tools: { timeoutMs: 30 }, breakers: false }, observe: { journalCapacity: 50 } });
    const started = performance.now();
    await agent.run('wait');
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(model.calls[1]?.messages.find((m) => m.role === 'tool')?.content).toMatch(/timed out|timeout/i);
    expect(agent.journal.capacity).toBe(50);
  });
});

describe('checking the config', () => {
  it('rejects unknown keys, at the top and in a group, naming each', () => {
    const model = scriptedModel([]);
    expect(() => createUntyped({ model, strategy: 'tree' })).toThrow(ConfigurationError);
    expect(() => createUntyped({ model, strategy: 'tree' })).toThrow(/unknown option `strategy`; a config takes `id`/);
    expect(() => createUntyped({ model, gate: gates.permissive(), store: {} })).toThrow(/unknown options `gate`, `store`;/);
    expect(() => createUntyped({ model, policy: { gates: [] } })).toThrow(/unknown option `policy\.gates`; `policy` takes `gate`/);
    expect(() => createUntyped({ model: { provider: model, modelName: 'x' } })).toThrow(/unknown option `model\.modelName`; `model` takes `provider`/);
    expect(() => createUntyped({ model, context: { tokenBudget: 1_000 } })).toThrow(/unknown option `context\.tokenBudget`; `context` takes `budget`/);
  });

  it.each([[null], [undefined], ['gpt-4o'], [42], [[]]])('rejects %j as a config', (config) => {
    expect(() => createUntyped(config)).toThrow(ConfigurationError);
    expect(() => createUntyped(config)).toThrow(/needs a config object/);
  });

  it('rejects an agent id that journals, stores and database rows cannot hold: empty, over 200 characters, or with a control character', () => {
    const model = scriptedModel([]);
    for (const id of ['', 'a'.repeat(201), 'agent\u0000x', 'line\nbreak']) {
      expect(() => createUntyped({ model, id })).toThrow(/`id` must be 1 to 200 characters, none of them a control character/);
    }
    expect(createUntyped({ model, id: 'a'.repeat(200) }).id).toBe('a'.repeat(200));
    expect(createUntyped({ model, id: 'équipe/研究 agent' }).id).toBe('équipe/研究 agent');
  });

  it('rejects a missing or malformed model', () => {
    expect(() => createUntyped({})).toThrow(/needs a `model`/);
    expect(() => createUntyped({ model: 'gpt-4o' })).toThrow(/`model` must be an InferenceProvider/);
    expect(() => createUntyped({ model: { provider: 'openai' } })).toThrow(/`model\.provider` must be an InferenceProvider/);
    expect(() => createUntyped({ model: { provider: scriptedModel([]), temperature: 'hot' } })).toThrow(/`model\.temperature` must be a number/);
    expect(() => createUntyped({ model: { provider: scriptedModel([]), maxTokens: 0 } })).toThrow(/`model\.maxTokens` must be a positive integer/);
    expect(() => createUntyped({ model: { provider: scriptedModel([]) }, policy: { gateTimeoutMs: 0 } })).toThrow(/`policy\.gateTimeoutMs` must be a positive integer \(ms\)/);
    expect(() => createUntyped({ model: { provider: scriptedModel([]) }, policy: { gateTimeoutMs: '30s' } })).toThrow(/`policy\.gateTimeoutMs` must be a positive integer \(ms\)/);
    expect(() => createUntyped({ model: { provider: scriptedModel([]), onLength: 'continue' } })).toThrow(/`model\.onLength` must be 'end' or \{ continue: n \}/);
    expect(() => createUntyped({ model: { provider: scriptedModel([]), onLength: { continue: -1 } } })).toThrow(/`model\.onLength` must be/);
    expect(() => createUntyped({ model: { provider: scriptedModel([]), reasoningEffort: 'max' } })).toThrow(/`model\.reasoningEffort` must be one of minimal, low, medium, high/);
  });

  it('rejects values of the wrong kind in the groups', () => {
    const model = scriptedModel([]);
    expect(() => createUntyped({ model, policy: { gate: () => true } })).toThrow(/`policy\.gate` must be a PolicyGate/);
    expect(() => createUntyped({ model, policy: 'strict' })).toThrow(/`policy` must be an object/);
    expect(() => createUntyped({ model, observe: { events: 'log' } })).toThrow(/`observe\.events` must be an observer/);
    expect(() => createUntyped({ model, tools: {} })).toThrow(/`tools` must be an array/);
  });

  it('reports an unknown key before the other problems of the same config', () => {
    expect(() => createUntyped({ model: 'gpt-4o', policy: 3, strategy: 'tree' })).toThrow(/^createAgent: unknown option `strategy`;/);
  });

  it('names the keys a nested group takes, read from the schema, and what a bad value should be', () => {
    const model = scriptedModel([]);
    expect(() => createUntyped({ model, context: { content: { maxBytes: 1 } } })).toThrow(
      'createAgent: unknown option `context.content.maxBytes`; `context.content` takes `maxImageBytes`, `maxFileBytes`.',
    );
    expect(() => createUntyped({ model, context: { content: { maxImageBytes: '5mb' } } })).toThrow(
      'createAgent: `context.content.maxImageBytes` must be a positive integer (bytes) (got the string "5mb").',
    );
    expect(() => createUntyped({ model: { provider: model, maxTokens: 0 } })).toThrow('createAgent: `model.maxTokens` must be a positive integer (got 0).');
    expect(() => createUntyped({ model, resilience: 'on' })).toThrow(/`resilience` must be an object with `breakers`, `recovery`, `tools`, `stuckDetection`/);
  });

  it('fills in defaults from DEFAULTS and leaves what is not set absent', () => {
    const provider = scriptedModel([]);
    const gate = gates.permissive();
    const settings = resolveConfig({ model: { provider, name: 'm' }, policy: { gate }, limits: { maxIterations: 7 } });
    expect(settings.model).toEqual({ provider, name: 'm', stream: false, vision: false });
    expect(settings.policy).toEqual({ gate, gateTimeoutMs: DEFAULTS.policy.gateTimeoutMs });
    expect(settings.limits).toEqual({ ...DEFAULTS.loop, maxIterations: 7 });
    expect(settings.context).toEqual({ compactOnOverflow: true });
    expect(resolveConfig({ model: provider, context: { content: { maxFileBytes: 10 } } })).toMatchObject({
      model: { provider, stream: false, vision: false },
      tools: [],
      mcpServers: [],
      limits: DEFAULTS.loop,
      context: { content: { maxImageBytes: DEFAULTS.content.maxImageBytes, maxFileBytes: 10 } },
    });
  });
});
