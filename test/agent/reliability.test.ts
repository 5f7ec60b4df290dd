/**
 * End to end through `createAgent`: what a hostile
 * or broken tool, model or loop does to a run, and what the model and the caller see.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import type { JournalEntry, LoopEventOf } from '../../src/core/loopEvent.ts';
import { scriptedModel, type ScriptStep } from '../../src/testing/index.ts';
import { defineTool } from '../../src/tools/defineTool.ts';
import { agentWithEntries as agentWith, stopTrackedAgents, toolMessages, collectUnhandledRejections } from '../support/agents.ts';
import type { RunError, RunLimitError } from '../../src/agent/errors.ts';

afterEach(stopTrackedAgents);

function events<TType extends JournalEntry['event']['type']>(entries: readonly JournalEntry[], type: TType): LoopEventOf<TType>[] {
  return entries.map((e) => e.event).filter((e): e is LoopEventOf<TType> => e.type === type);
}

const Sum = z.object({ a: z.number(), b: z.number() });

function adder() {
  const received: unknown[] = [];
  const tool = defineTool({
    name: 'add',
    description: 'Add two numbers',
    input: Sum,
    execute: (args) => {
      received.push(args);
      return args.a + args.b;
    },
  });
  return { tool, received };
}

describe('a tool that hangs', () => {
  it('times out, aborts the signal, gives the model a timeout observation and the loop goes on', async () => {
    const signals: AbortSignal[] = [];
    const hang = defineTool({
      name: 'hang',
      description: 'Never answers and ignores its signal',
      input: z.object({}),
      timeoutMs: 50,
      execute: (_args, { signal }) => {
        signals.push(signal);
        return new Promise<never>(() => undefined);
      },
    });
    const model = scriptedModel([{ toolCalls: [{ id: 'h1', name: 'hang', arguments: {} }] }, { text: 'it hung, moving on' }]);
    const { agent, entries } = agentWith({ model, tools: [hang] });
    const started = performance.now();
    const result = await agent.run('call hang');
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(result.text).toBe('it hung, moving on');
    expect(signals).toHaveLength(1);
    expect(signals[0]?.aborted).toBe(true);
    expect((signals[0]?.reason as Error).name).toBe('TimeoutError');
    expect(toolMessages(model.calls[1]?.messages ?? [])).toEqual([
      { role: 'tool', toolCallId: 'h1', name: 'hang', content: 'Tool "hang" timed out after 50 ms.', isError: true },
    ]);
    expect(events(entries, 'tool.finished')).toMatchObject([{ toolCallId: 'h1', status: 'timeout' }]);
  });

  it('leaves no timer behind once the run has ended (fake timers)', async () => {
    vi.useFakeTimers();
    try {
      const hang = defineTool({
        name: 'hang',
        description: 'Never answers',
        input: z.object({}),
        timeoutMs: 1_000,
        execute: () => new Promise<never>(() => undefined),
      });
      const model = scriptedModel([{ toolCalls: [{ id: 'h1', name: 'hang', arguments: {} }] }, { text: 'done' }]);
      const { agent } = agentWith({ model, tools: [hang] });
      const run = agent.start('call hang');
      await vi.advanceTimersByTimeAsync(999);
      expect(run.phase()).toBe('act');
      await vi.advanceTimersByTimeAsync(1);
      const result = await run.result;
      expect(toolMessages(result.messages)[0]?.content).toBe('Tool "hang" timed out after 1000 ms.');
      // The run timer (limits.timeoutMs) and the tool timer are both gone.
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('a tool that throws', () => {
  const unhandled = collectUnhandledRejections();

  it('turns an Error, a rejected promise, a string and null into sanitised observations, with no unhandled rejection', async () => {
    const Kind = z.object({ kind: z.enum(['error', 'rejected', 'string', 'null', 'stacky']) });
    const thrower = defineTool({
      name: 'thrower',
      description: 'Fails in many ways',
      input: Kind,
      execute: ({ kind }) => {
        switch (kind) {
          case 'error':
            throw new TypeError('bad input');
          case 'rejected':
            return Promise.reject(new RangeError('out of range'));
          case 'string':
            throw 'plain string failure';
          case 'null':
            throw null;
          case 'stacky': {
            const error = new Error('with a stack\n    at secret (/srv/app/internal.js:10:5)\n    at run (/srv/app/main.js:3:1)');
            throw error;
          }
        }
      },
    });
    const kinds = ['error', 'rejected', 'string', 'null', 'stacky'] as const;
    const model = scriptedModel([
      { toolCalls: kinds.map((kind, i) => ({ id: `t${i}`, name: 'thrower', arguments: { kind } })) },
      { text: 'all failed' },
    ]);
    const { agent, entries } = agentWith({ model, tools: [thrower], resilience: { breakers: false } });
    const result = await agent.run('fail five ways');
    // Give any stray rejection a chance to be reported.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(unhandled).toEqual([]);
    expect(result.text).toBe('all failed');
    const seen = toolMessages(model.calls[1]?.messages ?? []);
    expect(seen.map((m) => [m.toolCallId, m.content, m.isError])).toEqual([
      ['t0', 'TypeError: bad input', true],
      ['t1', 'RangeError: out of range', true],
      ['t2', 'plain string failure', true],
      ['t3', 'Tool failed without an error message (threw null)', true],
      ['t4', 'Error: with a stack', true],
    ]);
    for (const message of seen) {
      expect(message.content).not.toMatch(/\bat \S+ \(|\.js:\d+/);
    }
    // tool.finished arrives in completion order; every call has one, typed 'error'.
    const finishedEvents = events(entries, 'tool.finished').map((e) => [e.toolCallId, e.status]);
    expect(finishedEvents.sort()).toEqual(kinds.map((_, i) => [`t${i}`, 'error']));
    expect(JSON.stringify(entries)).not.toContain('/srv/app');
  });
});

describe('malformed tool arguments', () => {
  const malformed: Array<[string, string, RegExp]> = [
    ['truncated JSON', '{"a": 1, "b":', /not valid JSON/],
    ['prose', 'please add one and two', /not valid JSON/],
    ['an empty string', '', /the arguments were empty/],
    ['wrong types', '{"a": "1", "b": 2}', /- a: Invalid input: expected number, received string/],
    ['extra keys', '{"a": 1, "b": 2, "c": 3}', /unknown key "c"; remove it/],
    ['a __proto__ key', '{"a": 1, "b": 2, "__proto__": {"polluted": true}}', /"__proto__" is not allowed/],
  ];

  it('never executes the tool and gives the model the issues', async () => {
    const { tool, received } = adder();
    const model = scriptedModel([
      { toolCalls: malformed.map(([, args], i) => ({ id: `m${i}`, name: 'add', arguments: args })) },
      { toolCalls: [{ id: 'fixed', name: 'add', arguments: { a: 1, b: 2 } }] },
      { text: '3' },
    ]);
    const { agent, entries } = agentWith({ model, tools: [tool] });
    const result = await agent.run('add 1 and 2');
    expect(received).toEqual([{ a: 1, b: 2 }]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    const seen = toolMessages(model.calls[1]?.messages ?? []);
    expect(seen).toHaveLength(malformed.length);
    malformed.forEach(([label, , issue], i) => {
      expect(seen[i]?.isError, label).toBe(true);
      expect(seen[i]?.content, label).toMatch(/^Invalid arguments for tool "add"/);
      expect(seen[i]?.content, label).toMatch(issue);
    });
    expect(toolMessages(result.messages).at(-1)).toMatchObject({ toolCallId: 'fixed', content: '3' });
    expect(events(entries, 'policy.evaluated').slice(0, malformed.length).every((e) => e.decision === 'invalid')).toBe(true);
    expect(events(entries, 'tool.started').map((e) => e.toolCallId)).toEqual(['fixed']);
  });

  it('rejects with RunError (model_repair_exhausted) carrying the run id after maxRepairTurns + 1 all-invalid turns', async () => {
    const { tool, received } = adder();
    const model = scriptedModel((_request, n) => ({ toolCalls: [{ id: `bad${n}`, name: 'add', arguments: '{"a": 1,' }] }));
    const { agent } = agentWith({ model, tools: [tool], limits: { maxRepairTurns: 2 } });
    const error = await agent.run('add', { runId: 'run-repair' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'model_repair_exhausted' });
    const typed = error as RunError;
    expect(typed.runId).toBe('run-repair');
    expect(typed.result.runId).toBe('run-repair');
    expect(typed.result.reason).toBe('model_behavior');
    expect(typed.result.iterations).toBe(3);
    expect(model.calls).toHaveLength(3);
    expect(received).toEqual([]);
  });

  it('does not count a turn with at least one well-formed call as a repair turn', async () => {
    const { tool, received } = adder();
    const bad = (id: string): ScriptStep => ({ toolCalls: [{ id, name: 'add', arguments: 'nope' }] });
    const mixed: ScriptStep = {
      toolCalls: [
        { id: 'ok', name: 'add', arguments: { a: 2, b: 2 } },
        { id: 'x', name: 'add', arguments: 'nope' },
      ],
    };
    const model = scriptedModel([bad('1'), bad('2'), mixed, bad('3'), bad('4'), { text: 'done' }]);
    const { agent } = agentWith({ model, tools: [tool], limits: { maxRepairTurns: 2 } });
    const result = await agent.run('add');
    expect(result.text).toBe('done');
    expect(received).toEqual([{ a: 2, b: 2 }]);
  });
});

describe('unknown tool names', () => {
  it('answers __proto__, constructor, toString and near misses with "not found"; nothing runs', async () => {
    const { tool, received } = adder();
    const names = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', 'ADD'];
    const model = scriptedModel([
      { toolCalls: names.map((name, i) => ({ id: `u${i}`, name, arguments: { a: 1, b: 2 } })) },
      { text: 'no such tools' },
    ]);
    const { agent, entries } = agentWith({ model, tools: [tool] });
    const result = await agent.run('call odd names');
    expect(result.text).toBe('no such tools');
    expect(received).toEqual([]);
    const seen = toolMessages(model.calls[1]?.messages ?? []);
    expect(seen.map((m) => m.toolCallId)).toEqual(names.map((_, i) => `u${i}`));
    names.forEach((name, i) => {
      expect(seen[i]?.content).toContain(`Tool "${name}" not found.`);
      expect(seen[i]?.content).toContain('Available tools: add.');
      expect(seen[i]?.isError).toBe(true);
    });
    expect(seen[5]?.content).toContain('Did you mean "add"?');
    expect(events(entries, 'policy.evaluated').map((e) => e.decision)).toEqual(names.map(() => 'unknown_tool'));
    expect(events(entries, 'tool.started')).toEqual([]);
    expect(events(entries, 'tools.dispatched')).toEqual([]);
  });
});

describe('huge tool output', () => {
  const TEN_MB = 10 * 1024 * 1024;
  const MARKER = /\n\[truncated: showing \d+ of (at least )?\d+ bytes\]$/;

  it('truncates 10 MB text, binary and invalid UTF-8 with a marker before the conversation and the events', async () => {
    const outputs: Record<string, () => unknown> = {
      text: () => 'x'.repeat(TEN_MB),
      binary: () => Buffer.alloc(TEN_MB, 0xff),
      invalid_utf8: () => Buffer.concat([Buffer.from('ok '), Buffer.from([0xc3, 0x28, 0xa0, 0xa1, 0xe2, 0x28, 0xa1]), Buffer.alloc(TEN_MB, 0x61)]),
      lone_surrogates: () => '\ud800'.repeat(TEN_MB / 2),
      object: () => ({ rows: Array.from({ length: 200_000 }, (_, i) => ({ i, v: 'value' })) }),
    };
    const kinds = Object.keys(outputs);
    const huge = defineTool({
      name: 'huge',
      description: 'Returns a lot',
      input: z.object({ kind: z.string() }),
      execute: ({ kind }) => (outputs[kind] as () => unknown)(),
    });
    const model = scriptedModel([
      { toolCalls: kinds.map((kind, i) => ({ id: `h${i}`, name: 'huge', arguments: { kind } })) },
      { text: 'summarised' },
    ]);
    const maxResultBytes = 4_096;
    const { agent, entries } = agentWith({ model, tools: [huge], resilience: { tools: { maxResultBytes } } });
    const result = await agent.run('get everything');
    const seen = toolMessages(result.messages);
    expect(seen).toHaveLength(kinds.length);
    for (const [i, message] of seen.entries()) {
      const kind = kinds[i] as string;
      expect(Buffer.byteLength(message.content), kind).toBeLessThanOrEqual(maxResultBytes);
      expect(message.content, kind).not.toMatch(/[\uD800-\uDFFF]/);
    }
    expect(seen[0]?.content).toMatch(MARKER);
    expect(seen[0]?.content).toContain(`of ${TEN_MB} bytes]`);
    expect(seen[1]?.content).toMatch(/^\[binary: 10485760 bytes/);
    expect(seen[2]?.content).toMatch(/^\[binary|\n\[truncated/);
    expect(seen[3]?.content).toMatch(MARKER);
    expect(seen[4]?.content).toMatch(MARKER);
    // What the model was sent is exactly the bounded content.
    expect(toolMessages(model.calls[1]?.messages ?? []).map((m) => m.content)).toEqual(seen.map((m) => m.content));
    // Events and the journal never carry the payload.
    expect(JSON.stringify(entries).length).toBeLessThan(20_000);
    expect(JSON.stringify(agent.journal.entries(result.runId)).length).toBeLessThan(20_000);
  });

  it('bounds a 10 MB error message the same way', async () => {
    const loud = defineTool({
      name: 'loud',
      description: 'Fails loudly',
      input: z.object({}),
      execute: () => {
        throw new Error('E'.repeat(TEN_MB));
      },
    });
    const model = scriptedModel([{ toolCalls: [{ id: 'l1', name: 'loud', arguments: {} }] }, { text: 'ok' }]);
    const { agent, entries } = agentWith({ model, tools: [loud] });
    const result = await agent.run('fail');
    const content = toolMessages(result.messages)[0]?.content ?? '';
    expect(content.length).toBeLessThanOrEqual(2_000);
    expect(content).toMatch(/\[truncated, \d+ chars\]$/);
    expect(JSON.stringify(entries).length).toBeLessThan(20_000);
  });
});

describe('a runaway loop', () => {
  /** The model repeats the same call forever (stuck detection, which would end it first, is off where a budget is under test). */
  const forever = (usage?: { totalTokens: number }) =>
    scriptedModel(() => ({ toolCalls: [{ id: 'same', name: 'add', arguments: { a: 1, b: 1 } }], ...(usage === undefined ? {} : { usage }) }));

  it('ends with RunLimitError (max_iterations) carrying the run id', async () => {
    const { tool, received } = adder();
    const { agent } = agentWith({ model: forever(), tools: [tool], limits: { maxIterations: 7 }, resilience: { stuckDetection: false } });
    const error = await agent.run('loop', { runId: 'run-loop' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'max_iterations' });
    expect((error as RunLimitError).runId).toBe('run-loop');
    expect((error as RunLimitError).result).toMatchObject({ runId: 'run-loop', reason: 'max_iterations', iterations: 7, status: 'failed' });
    expect(received).toHaveLength(7);
  });

  it('ends with RunLimitError (max_tokens) once the token budget is used', async () => {
    const { tool } = adder();
    const { agent } = agentWith({ model: forever({ totalTokens: 400 }), tools: [tool], limits: { maxTotalTokens: 1_000 } });
    const error = await agent.run('loop', { runId: 'run-tokens' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'max_tokens' });
    expect((error as RunLimitError).runId).toBe('run-tokens');
    expect((error as RunLimitError).result).toMatchObject({ reason: 'max_tokens', iterations: 3, usage: { totalTokens: 1_200 } });
  });

  it('ends with RunLimitError (run_timeout) at the wall-clock limit, even when every step answers instantly', async () => {
    const { tool } = adder();
    const { agent } = agentWith({
      model: scriptedModel(() => ({ toolCalls: [{ id: 'same', name: 'add', arguments: { a: 1, b: 1 } }] }), { recordCalls: false }),
      tools: [tool],
      limits: { timeoutMs: 60, maxIterations: 1_000_000, maxTotalTokens: Number.MAX_SAFE_INTEGER },
      observe: { journalCapacity: 100 },
      resilience: { stuckDetection: false },
    });
    const started = performance.now();
    const error = await agent.run('loop', { runId: 'run-clock' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'run_timeout' });
    expect((error as RunLimitError).runId).toBe('run-clock');
    expect((error as RunLimitError).result.reason).toBe('timeout');
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it('ends with RunLimitError (run_timeout) and aborts the tool when a slow tool outlives the run', async () => {
    const signals: AbortSignal[] = [];
    const slow = defineTool({
      name: 'slow',
      description: 'Slow',
      input: z.object({}),
      execute: (_args, { signal }) => {
        signals.push(signal);
        return new Promise<string>((resolve) => setTimeout(() => resolve('late'), 5_000).unref());
      },
    });
    const model = scriptedModel([{ toolCalls: [{ id: 's1', name: 'slow', arguments: {} }] }, { text: 'never' }]);
    const { agent } = agentWith({ model, tools: [slow], limits: { timeoutMs: 50 } });
    const error = await agent.run('slow').catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'run_timeout' });
    expect(signals[0]?.aborted).toBe(true);
    expect(model.calls).toHaveLength(1);
  });
});
