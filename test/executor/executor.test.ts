/**
 * The executor: bounded parallel dispatch, per-call timeouts that a hung tool cannot
 * defeat, results in call order, cancellation through AbortSignal, and no timers left behind.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import type { ActCall } from '../../src/core/run.ts';
import { createAgent } from '../../src/agent/createAgent.ts';
import { DEFAULTS } from '../../src/core/defaults.ts';
import type { LoopEvent } from '../../src/core/loopEvent.ts';
import { createExecutor, type ExecutionScope, type ExecutorOptions } from '../../src/executor/executor.ts';
import { createBreakerRegistry } from '../../src/resilience/breakerRegistry.ts';
import { recovery } from '../../src/resilience/recovery.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { defineTool } from '../../src/tools/defineTool.ts';
import { createToolRegistry } from '../../src/tools/registry.ts';
import type { Tool } from '../../src/tools/types.ts';

afterEach(() => {
  vi.useRealTimers();
});

const Ms = z.object({ ms: z.number() });

/** A tool that waits `ms` (honouring its signal) and tracks how many of its calls are in flight. */
function gauge(name = 'wait') {
  const stats = { inFlight: 0, maxInFlight: 0, started: 0, signals: [] as AbortSignal[] };
  const tool = defineTool({
    name,
    description: 'Waits',
    input: Ms,
    execute: async ({ ms }, { signal, toolCallId }) => {
      stats.started++;
      stats.signals.push(signal);
      stats.inFlight++;
      stats.maxInFlight = Math.max(stats.maxInFlight, stats.inFlight);
      try {
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(resolve, ms);
          signal.addEventListener('abort', () => {
            clearTimeout(timer);
            reject(signal.reason);
          });
        });
        return `done ${toolCallId}`;
      } finally {
        stats.inFlight--;
      }
    },
  });
  return { tool, stats };
}

/** Never resolves and ignores its signal; records the signal it got. */
function hungTool(signals: AbortSignal[], timeoutMs?: number): Tool {
  return defineTool({
    name: 'hang',
    description: 'Hangs',
    input: z.object({}),
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
    execute: (_args, { signal }) => {
      signals.push(signal);
      return new Promise<never>(() => undefined);
    },
  });
}

function calls(name: string, args: readonly unknown[]): ActCall[] {
  return args.map((a, index) => ({ index, call: { id: `c${index}`, name, arguments: JSON.stringify(a) }, arguments: a }));
}

function scope(signal: AbortSignal = new AbortController().signal) {
  const events: LoopEvent[] = [];
  const s: ExecutionScope = { runId: 'run-x', agentId: 'agent-x', iteration: 0, signal, emit: (e) => events.push(e) };
  return { scope: s, events };
}

function executor(tools: readonly Tool[], options: Omit<ExecutorOptions, 'tools'> = {}) {
  return createExecutor({ tools: createToolRegistry(tools), ...options });
}

describe('executor', () => {
  describe('concurrency bound', () => {
    it(`never runs more than the default (${DEFAULTS.tools.maxConcurrency}) tools at once`, async () => {
      const { tool, stats } = gauge();
      const outcomes = await executor([tool]).run(calls('wait', Array.from({ length: 12 }, () => ({ ms: 15 }))), scope().scope);
      expect(DEFAULTS.tools.maxConcurrency).toBe(5);
      expect(stats.maxInFlight).toBe(5);
      expect(stats.started).toBe(12);
      expect(outcomes.map((o) => o.status)).toEqual(Array.from({ length: 12 }, () => 'ok'));
    });

    it('respects a custom bound: 10 calls with maxConcurrency 2 never exceed 2', async () => {
      const { tool, stats } = gauge();
      const outcomes = await executor([tool], { maxConcurrency: 2 }).run(
        calls('wait', Array.from({ length: 10 }, () => ({ ms: 5 }))),
        scope().scope,
      );
      expect(stats.maxInFlight).toBe(2);
      expect(outcomes).toHaveLength(10);
    });

    it('runs all calls at once when there are fewer than the bound', async () => {
      const { tool, stats } = gauge();
      await executor([tool], { maxConcurrency: 8 }).run(calls('wait', [{ ms: 20 }, { ms: 20 }, { ms: 20 }]), scope().scope);
      expect(stats.maxInFlight).toBe(3);
    });

    it('applies the agent executor option to a whole act phase', async () => {
      const { tool, stats } = gauge();
      const model = scriptedModel([
        { toolCalls: Array.from({ length: 10 }, (_, i) => ({ id: `p${i}`, name: 'wait', arguments: { ms: 5 } })) },
        { text: 'done' },
      ]);
      // Ten identical calls in one phase on purpose: stuck detection would end the run.
      const agent = createAgent({ model, tools: [tool], resilience: { tools: { maxConcurrency: 2 }, stuckDetection: false } });
      const result = await agent.run('go');
      agent.stop();
      expect(stats.maxInFlight).toBe(2);
      expect(result.messages.filter((m) => m.role === 'tool')).toHaveLength(10);
    });
  });

  describe('per-call timeout', () => {
    it('times out a hung tool, aborts its signal, and returns a timeout observation while the others finish', async () => {
      const signals: AbortSignal[] = [];
      const { tool, stats } = gauge();
      const mixed: ActCall[] = [
        { index: 0, call: { id: 'h', name: 'hang', arguments: '{}' }, arguments: {} },
        { index: 1, call: { id: 'w', name: 'wait', arguments: '{"ms":1}' }, arguments: { ms: 1 } },
      ];
      const { scope: s, events } = scope();
      const started = performance.now();
      const outcomes = await executor([hungTool(signals), tool], { timeoutMs: 50 }).run(mixed, s);
      expect(performance.now() - started).toBeLessThan(1_000);
      expect(outcomes).toEqual([
        { toolCallId: 'h', tool: 'hang', status: 'timeout', content: 'Tool "hang" timed out after 50 ms.', isError: true },
        { toolCallId: 'w', tool: 'wait', status: 'ok', content: 'done w', isError: false },
      ]);
      expect(signals[0]?.aborted).toBe(true);
      expect(signals[0]?.reason).toMatchObject({ name: 'TimeoutError' });
      expect(stats.signals[0]?.aborted).toBe(false);
      expect(events).toContainEqual({ type: 'recovery.triggered', toolCallId: 'h', tool: 'hang', strategy: 'askModel', attempt: 1, error: 'Tool "hang" timed out after 50 ms.' });
    });

    it("prefers the tool's own timeoutMs over the executor default", async () => {
      const signals: AbortSignal[] = [];
      const outcomes = await executor([hungTool(signals, 30)], { timeoutMs: 60_000 }).run(calls('hang', [{}]), scope().scope);
      expect(outcomes[0]?.content).toBe('Tool "hang" timed out after 30 ms.');
    });

    it('leaves no timer behind after a timeout or a normal finish (fake timers)', async () => {
      vi.useFakeTimers();
      const signals: AbortSignal[] = [];
      const { tool } = gauge();
      const exec = executor([hungTool(signals), tool], { timeoutMs: 1_000 });
      const batch: ActCall[] = [
        { index: 0, call: { id: 'h', name: 'hang', arguments: '{}' }, arguments: {} },
        { index: 1, call: { id: 'w', name: 'wait', arguments: '{"ms":10}' }, arguments: { ms: 10 } },
      ];
      const pending = exec.run(batch, scope().scope);
      await vi.advanceTimersByTimeAsync(10);
      // The finished call's deadline is cleared at once; only the hung call's deadline is left.
      expect(vi.getTimerCount()).toBe(1);
      await vi.advanceTimersByTimeAsync(990);
      const outcomes = await pending;
      expect(outcomes.map((o) => o.status)).toEqual(['timeout', 'ok']);
      expect(vi.getTimerCount()).toBe(0);
    });

    it('leaves no abort listener on the run signal after the calls settle', async () => {
      const controller = new AbortController();
      const signals: AbortSignal[] = [];
      const { tool } = gauge();
      const added = vi.spyOn(controller.signal, 'addEventListener');
      const removed = vi.spyOn(controller.signal, 'removeEventListener');
      await executor([hungTool(signals), tool], { timeoutMs: 20 }).run(
        [
          { index: 0, call: { id: 'h', name: 'hang', arguments: '{}' }, arguments: {} },
          { index: 1, call: { id: 'w', name: 'wait', arguments: '{"ms":1}' }, arguments: { ms: 1 } },
        ],
        scope(controller.signal).scope,
      );
      expect(added).toHaveBeenCalledTimes(2);
      expect(removed).toHaveBeenCalledTimes(2);
    });
  });

  describe('result order', () => {
    it('returns outcomes in call order even when later calls finish first', async () => {
      const { tool } = gauge();
      const { scope: s, events } = scope();
      const outcomes = await executor([tool]).run(calls('wait', [{ ms: 40 }, { ms: 25 }, { ms: 10 }, { ms: 1 }]), s);
      expect(outcomes.map((o) => o.toolCallId)).toEqual(['c0', 'c1', 'c2', 'c3']);
      expect(outcomes.map((o) => o.content)).toEqual(['done c0', 'done c1', 'done c2', 'done c3']);
      const finishOrder = events.filter((e) => e.type === 'tool.finished').map((e) => (e as { toolCallId: string }).toolCallId);
      expect(finishOrder).toEqual(['c3', 'c2', 'c1', 'c0']);
    });

    it('keeps call order under a bound smaller than the batch', async () => {
      const { tool } = gauge();
      const delays = [30, 1, 20, 2, 10, 3];
      const outcomes = await executor([tool], { maxConcurrency: 2 }).run(calls('wait', delays.map((ms) => ({ ms }))), scope().scope);
      expect(outcomes.map((o) => o.toolCallId)).toEqual(delays.map((_, i) => `c${i}`));
    });
  });

  describe('cancellation', () => {
    it('aborts every running tool when the run signal aborts, and rejects with its reason', async () => {
      const { tool, stats } = gauge();
      const controller = new AbortController();
      const breakers = createBreakerRegistry();
      const pending = executor([tool], { breakers }).run(calls('wait', [{ ms: 5_000 }, { ms: 5_000 }]), scope(controller.signal).scope);
      await vi.waitFor(() => expect(stats.started).toBe(2));
      const reason = new Error('cancelled by test');
      controller.abort(reason);
      await expect(pending).rejects.toBe(reason);
      expect(stats.signals.every((s) => s.aborted)).toBe(true);
      // A cancellation is not the tool's failure: its breaker saw none.
      breakers.get('wait').recordFailure();
      breakers.get('wait').recordFailure();
      expect(breakers.get('wait').state).toBe('closed');
      breakers.stopAll();
    });

    it('refuses retry bounds that would never stop it, with a typed error saying what to pass', () => {
      for (const maxAttempts of [Number.NaN, 2.5, 0, Number.POSITIVE_INFINITY]) {
        expect(() => recovery.retry({ maxAttempts })).toThrow(expect.objectContaining({ code: 'configuration', message: expect.stringMatching(/maxAttempts.*whole number/) }));
      }
      expect(() => recovery.retry({ baseDelayMs: -1 })).toThrow(/baseDelayMs/);
      expect(() => recovery.retry({ maxDelayMs: Number.NaN })).toThrow(/maxDelayMs/);
      expect(recovery.retry({ maxAttempts: 1 })).toMatchObject({ kind: 'retry', maxAttempts: 1 });
    });

    it('stops a retry backoff as soon as the run is cancelled', async () => {
      let attempts = 0;
      const failing = defineTool({
        name: 'flaky',
        description: 'Always fails',
        input: z.object({}),
        recovery: recovery.retry({ maxAttempts: 5, baseDelayMs: 10_000, maxDelayMs: 10_000 }),
        execute: () => {
          attempts++;
          throw new Error('nope');
        },
      });
      const controller = new AbortController();
      const pending = executor([failing]).run(calls('flaky', [{}]), scope(controller.signal).scope);
      await vi.waitFor(() => expect(attempts).toBe(1));
      const started = performance.now();
      controller.abort(new Error('stop'));
      await expect(pending).rejects.toThrow('stop');
      expect(performance.now() - started).toBeLessThan(1_000);
      expect(attempts).toBe(1);
    });
  });

  describe('breakers and lookups', () => {
    it('refuses a call at once, without executing, while the tool breaker is open', async () => {
      let executed = 0;
      const failing = defineTool({
        name: 'down',
        description: 'Down',
        input: z.object({}),
        execute: () => {
          executed++;
          throw new Error('down');
        },
      });
      const breakers = createBreakerRegistry({ failureThreshold: 2 });
      const exec = executor([failing], { breakers });
      await exec.run(calls('down', [{}]), scope().scope);
      await exec.run(calls('down', [{}]), scope().scope);
      const { scope: s, events } = scope();
      const [refused] = await exec.run(calls('down', [{}]), s);
      expect(executed).toBe(2);
      expect(refused).toMatchObject({ status: 'circuit_open', isError: true });
      expect(refused?.content).toContain('circuit breaker is open');
      expect(events.some((e) => e.type === 'tool.started')).toBe(false);
      breakers.stopAll();
    });

    it('does not wedge a half-open breaker when the run is cancelled during its probe call', async () => {
      let failing = true;
      const { tool: slow, stats } = gauge('probe');
      const probe = defineTool({
        ...slow,
        execute: (args: { ms: number }, context) => {
          if (failing) throw new Error('down');
          return slow.execute(args, context);
        },
      });
      const breakers = createBreakerRegistry({ failureThreshold: 1, recoveryTimeoutMs: 20 });
      const exec = executor([probe], { breakers });
      await exec.run(calls('probe', [{ ms: 0 }]), scope().scope);
      expect(breakers.get('probe').state).toBe('open');
      await vi.waitFor(() => expect(breakers.get('probe').state).toBe('halfOpen'), { timeout: 2_000, interval: 5 });
      failing = false;
      const controller = new AbortController();
      const cancelled = exec.run(calls('probe', [{ ms: 5_000 }]), scope(controller.signal).scope);
      await vi.waitFor(() => expect(stats.started).toBe(1));
      controller.abort(new Error('cancelled during the probe'));
      await expect(cancelled).rejects.toThrow('cancelled during the probe');
      // The unfinished probe proves nothing: the breaker probes again later instead of
      // refusing every call forever as "being probed right now".
      await vi.waitFor(
        async () => {
          const [outcome] = await exec.run(calls('probe', [{ ms: 0 }]), scope().scope);
          expect(outcome?.status).toBe('ok');
        },
        { timeout: 2_000, interval: 10 },
      );
      expect(breakers.get('probe').state).toBe('closed');
      breakers.stopAll();
    });

    it('answers a call to a tool it does not know with an error outcome instead of throwing', async () => {
      const [outcome] = await executor([]).run(calls('__proto__', [{}]), scope().scope);
      expect(outcome).toEqual({ toolCallId: 'c0', tool: '__proto__', status: 'error', content: 'Tool "__proto__" is not available.', isError: true });
    });

    it('passes each execution an idempotency key made from the call: run, iteration, position, tool and arguments', async () => {
      const keys: string[] = [];
      const tool = defineTool({
        name: 'key',
        description: 'Records keys',
        input: z.object({ n: z.number().optional(), m: z.number().optional() }),
        execute: (_args, { idempotencyKey }) => {
          keys.push(idempotencyKey);
          return 'ok';
        },
      });
      const run = executor([tool]);
      await run.run(calls('key', [{}, {}]), scope().scope);
      expect(keys[0]).toMatch(/^run-x:0:0:key:[\w-]{22}$/);
      expect(keys[1]).toMatch(/^run-x:0:1:key:[\w-]{22}$/);
      // The same call again (same position, tool and arguments, keys in any order) has the same key;
      // the provider's call id is not part of it, other arguments or another iteration are.
      const again = (args: unknown, iteration = 0, id = 'other') =>
        run.run([{ index: 0, call: { id, name: 'key', arguments: JSON.stringify(args) }, arguments: args }], { ...scope().scope, iteration }).then(() => keys.at(-1));
      expect(await again({ n: 1, m: 2 })).toBe(await again({ m: 2, n: 1 }, 0, 'c0'));
      expect(await again({ n: 1 })).not.toBe(await again({ n: 2 }));
      expect(await again({ n: 1 })).not.toBe(await again({ n: 1 }, 1));
    });
  });
});
