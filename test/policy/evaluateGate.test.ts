import { afterEach, describe, expect, it, vi } from 'vitest';
import { ALLOW, decide, toGateDecision } from '../../src/policy/decision.ts';
import { evaluateGate, PolicyGateError, runGate } from '../../src/policy/evaluateGate.ts';
import type { GateContext, PolicyGate, ProposedAction } from '../../src/policy/types.ts';

const context: GateContext = { runId: 'run-1', agentId: 'agent-1', iteration: 1, messages: [] };
const action: ProposedAction = { toolCallId: 'call-1', tool: 'search', arguments: { q: 'x' }, permissions: [] };
const gate = (evaluate: () => unknown, name = 'custom'): PolicyGate => ({ name, evaluate: evaluate as PolicyGate['evaluate'] });

describe('evaluateGate', () => {
  it('passes valid decisions through', async () => {
    expect(await evaluateGate(gate(() => ({ kind: 'allow' })), action, context)).toEqual({ kind: 'allow' });
    expect(await evaluateGate(gate(() => ({ kind: 'deny', reason: 'no' })), action, context)).toEqual({ kind: 'deny', reason: 'no' });
    expect(await evaluateGate(gate(async () => ({ kind: 'modify', arguments: { q: 'y' }, reason: 'r' })), action, context)).toEqual({
      kind: 'modify',
      arguments: { q: 'y' },
      reason: 'r',
    });
  });

  it('passes a confirm through with its reason, and its arguments only when given', async () => {
    expect(await evaluateGate(gate(() => ({ kind: 'confirm', reason: 'ask first' })), action, context)).toEqual({ kind: 'confirm', reason: 'ask first' });
    expect(await evaluateGate(gate(async () => ({ kind: 'confirm', reason: 'ask', arguments: { q: 'y' } })), action, context)).toEqual({
      kind: 'confirm',
      reason: 'ask',
      arguments: { q: 'y' },
    });
  });

  it('drops extra keys from a decision', async () => {
    expect(await evaluateGate(gate(() => ({ kind: 'deny', reason: 'no', secret: 1 })), action, context)).toEqual({ kind: 'deny', reason: 'no' });
  });

  const misbehaviours: ReadonlyArray<readonly [string, () => unknown, PolicyGateError['failure']]> = [
    ['throws an Error', () => { throw new Error('boom'); }, 'threw'],
    ['throws a string', () => { throw 'boom'; }, 'threw'],
    ['throws null', () => { throw null; }, 'threw'],
    ['rejects', () => Promise.reject(new Error('boom')), 'rejected'],
    ['rejects with undefined', () => Promise.reject(undefined), 'rejected'],
    ['returns a string', () => 'allow', 'invalid_decision'],
    ['returns undefined', () => undefined, 'invalid_decision'],
    ['returns null', () => null, 'invalid_decision'],
    ['returns an unknown kind', () => ({ kind: 'maybe' }), 'invalid_decision'],
    ['returns a deny without a reason', () => ({ kind: 'deny' }), 'invalid_decision'],
    ['returns a deny with an empty reason', () => ({ kind: 'deny', reason: '' }), 'invalid_decision'],
    ['returns a modify without arguments', () => ({ kind: 'modify', reason: 'r' }), 'invalid_decision'],
    ['returns a confirm without a reason', () => ({ kind: 'confirm' }), 'invalid_decision'],
    ['returns a confirm with an empty reason', () => ({ kind: 'confirm', reason: '' }), 'invalid_decision'],
    ['resolves to garbage', async () => 42, 'invalid_decision'],
  ];
  it.each(misbehaviours)('denies (fails closed) when the gate %s', async (_label, evaluate, failure) => {
    const errors: PolicyGateError[] = [];
    const decision = await evaluateGate(gate(evaluate, 'flaky'), action, context, { onGateError: (e) => errors.push(e) });
    expect(decision.kind).toBe('deny');
    expect(decision.kind === 'deny' && decision.reason).toMatch(/tool "search" was denied because policy gate "flaky" .*fail closed/);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(PolicyGateError);
    expect(errors[0]).toMatchObject({ code: 'policy_gate_failed', blame: 'user', gate: 'flaky', failure });
  });

  it('keeps the thrown message out of the reason the model sees, but gives it to onGateError', async () => {
    const errors: PolicyGateError[] = [];
    const decision = await evaluateGate(
      gate(() => {
        throw new Error('db password hunter2 rejected');
      }),
      action,
      context,
      { onGateError: (e) => errors.push(e) },
    );
    expect(decision.kind === 'deny' && decision.reason).not.toMatch(/hunter2/);
    expect(errors[0]?.message).toMatch(/threw: db password hunter2 rejected.*fix the gate/);
  });

  it('denies when the gate is not a gate at all', async () => {
    expect(await evaluateGate(null as never, action, context)).toMatchObject({ kind: 'deny' });
    expect(await evaluateGate({ name: 'x' } as never, action, context)).toMatchObject({ kind: 'deny' });
  });

  it('still denies when onGateError itself throws', async () => {
    const decision = await evaluateGate(gate(() => 'garbage'), action, context, {
      onGateError: () => {
        throw new Error('observer broke');
      },
    });
    expect(decision.kind).toBe('deny');
  });

  describe('with timeoutMs', () => {
    afterEach(() => {
      vi.useRealTimers();
    });

    it('denies a gate that has not decided by then, tells onGateError, ignores its late answer and leaves no timer', async () => {
      vi.useFakeTimers();
      let answer: (decision: unknown) => void = () => undefined;
      const errors: PolicyGateError[] = [];
      const decided = evaluateGate(gate(() => new Promise((resolve) => (answer = resolve)), 'slow'), action, context, {
        timeoutMs: 2_000,
        onGateError: (e) => errors.push(e),
      });
      let settled: unknown;
      void decided.then((decision) => (settled = decision));
      await vi.advanceTimersByTimeAsync(1_999);
      expect(settled).toBeUndefined();
      await vi.advanceTimersByTimeAsync(1);
      expect(settled).toMatchObject({ kind: 'deny', reason: expect.stringMatching(/policy gate "slow" did not answer in time \(gates fail closed\)/) });
      answer({ kind: 'allow' });
      expect(await decided).toMatchObject({ kind: 'deny' });
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatchObject({ code: 'policy_gate_failed', gate: 'slow', failure: 'timed_out' });
      expect(errors[0]?.message).toMatch(/did not decide within 2000 ms.*raise policy\.gateTimeoutMs/);
      expect(vi.getTimerCount()).toBe(0);
    });

    it('passes a decision made in time through and clears its timer', async () => {
      vi.useFakeTimers();
      const decided = evaluateGate(gate(async () => ({ kind: 'allow' })), action, context, { timeoutMs: 2_000 });
      expect(await decided).toEqual({ kind: 'allow' });
      expect(vi.getTimerCount()).toBe(0);
    });
  });

  it('denies when a thenable has a throwing then', async () => {
    const thenable = { get then(): never { throw new Error('bad then'); } };
    expect(await evaluateGate(gate(() => thenable), action, context)).toMatchObject({ kind: 'deny' });
  });
});

describe('runGate', () => {
  it('answers synchronously for a synchronous gate and never throws', () => {
    expect(runGate(gate(() => ALLOW), action, context)).toBe(ALLOW);
    const denied = runGate(gate(() => { throw new Error('x'); }), action, context);
    expect(denied).not.toBeInstanceOf(Promise);
    expect(denied).toMatchObject({ kind: 'deny' });
  });

  it('returns a promise for an asynchronous gate', async () => {
    const result = runGate(gate(async () => ({ kind: 'allow' })), action, context);
    expect(result).toBeInstanceOf(Promise);
    expect(await result).toEqual({ kind: 'allow' });
  });
});

describe('decision helpers', () => {
  it('build valid decisions', () => {
    expect(toGateDecision(decide.allow())).toBe(ALLOW);
    expect(toGateDecision(decide.deny('no'))).toEqual({ kind: 'deny', reason: 'no' });
    expect(toGateDecision(decide.modify({ a: 1 }, 'why'))).toEqual({ kind: 'modify', arguments: { a: 1 }, reason: 'why' });
    expect(toGateDecision(decide.confirm('a human decides'))).toEqual({ kind: 'confirm', reason: 'a human decides' });
    expect(toGateDecision({ kind: 'modify', arguments: null, reason: 'cleared' })).toEqual({ kind: 'modify', arguments: null, reason: 'cleared' });
  });
});
