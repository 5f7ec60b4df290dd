/**
 * ProgressTracker: per-step re-attempt limits and stuck detection on near-identical
 * consecutive errors, reporting the configured action and `step.limit_reached`.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULTS } from '../../src/core/defaults.ts';
import { ConfigurationError } from '../../src/core/errors.ts';
import type { LoopEvent } from '../../src/core/loopEvent.ts';
import { ProgressTracker, type LimitAction } from '../../src/progress/progressTracker.ts';

const fail = (error: string) => ({ ok: false, error });
/** Errors different enough never to count as "the same error". */
const distinct = ['connection refused by db-1', 'HTTP 404 on /api/users', 'schema mismatch: expected array', 'disk quota exceeded'];

describe('ProgressTracker', () => {
  it('defaults to 2 re-attempts, threshold 0.85 and skipStep (from DEFAULTS.progress)', () => {
    const tracker = new ProgressTracker();
    expect(tracker.maxReattemptsPerStep).toBe(2);
    expect(tracker.similarityThreshold).toBe(0.85);
    expect(tracker.limitAction).toBe('skipStep');
    expect(DEFAULTS.progress).toMatchObject({ maxReattemptsPerStep: 2, similarityThreshold: 0.85, onLimitReached: 'skipStep' });
  });

  it('lets a step fail once plus its re-attempts, then stops it', () => {
    const tracker = new ProgressTracker();
    tracker.beginStep('extract');
    expect(tracker.recordAndCheck('extract', fail(distinct[0] as string))).toEqual({ kind: 'continue' });
    expect(tracker.recordAndCheck('extract', fail(distinct[1] as string))).toEqual({ kind: 'continue' });
    const third = tracker.recordAndCheck('extract', fail(distinct[2] as string));
    expect(third).toMatchObject({ kind: 'stop', action: 'skipStep' });
    expect(third.kind === 'stop' && third.reason).toMatch(/failed 3 times/);
    expect(tracker.attempts('extract')).toBe(3);
  });

  it.each<LimitAction>(['skipStep', 'abortTask', 'escalate'])('reports onLimitReached %s and emits step.limit_reached once', (action) => {
    const events: LoopEvent[] = [];
    const tracker = new ProgressTracker({ maxReattemptsPerStep: 0, onLimitReached: action, emit: (e) => events.push(e) });
    tracker.beginStep('s');
    const decision = tracker.recordAndCheck('s', fail('boom'));
    expect(decision).toMatchObject({ kind: 'stop', action });
    // A stopped step stays stopped (same decision) and is announced only once.
    expect(tracker.recordAndCheck('s', fail('other'))).toBe(decision);
    expect(events).toEqual([{ type: 'step.limit_reached', step: 's', reason: expect.stringMatching(/failed 1 times/) as unknown, action }]);
  });

  it('stops early when two consecutive errors are near-identical', () => {
    const events: LoopEvent[] = [];
    const tracker = new ProgressTracker({ maxReattemptsPerStep: 10, emit: (e) => events.push(e) });
    tracker.beginStep('fetch');
    expect(tracker.recordAndCheck('fetch', fail('ECONNREFUSED 10.0.0.1:5432 (attempt 1)'))).toEqual({ kind: 'continue' });
    const second = tracker.recordAndCheck('fetch', fail('ECONNREFUSED 10.0.0.1:5432 (attempt 2)'));
    expect(second).toMatchObject({ kind: 'stop', action: 'skipStep' });
    expect(second.kind === 'stop' && second.reason).toMatch(/^stuck: .*similar/);
    expect(events).toHaveLength(1);
  });

  it('stops at similarity exactly equal to the threshold and continues just below it', () => {
    // One substitution in 20 characters: similarity exactly 0.95.
    const a = 'abcdefghijklmnopqrst';
    const b = 'abcdefghijklmnopqrsX';
    const at = new ProgressTracker({ maxReattemptsPerStep: 10, similarityThreshold: 0.95 });
    at.recordAndCheck('s', fail(a));
    expect(at.recordAndCheck('s', fail(b)).kind).toBe('stop');
    const above = new ProgressTracker({ maxReattemptsPerStep: 10, similarityThreshold: 0.951 });
    above.recordAndCheck('s', fail(a));
    expect(above.recordAndCheck('s', fail(b)).kind).toBe('continue');
  });

  it('with threshold 1 only identical (whitespace-normalised) errors are stuck; with 0 any second error is', () => {
    const strict = new ProgressTracker({ maxReattemptsPerStep: 10, similarityThreshold: 1 });
    strict.recordAndCheck('s', fail('timeout after 30 s'));
    expect(strict.recordAndCheck('s', fail('timeout after 31 s')).kind).toBe('continue');
    expect(strict.recordAndCheck('s', fail('  timeout   after 31 s\n')).kind).toBe('stop');
    const loose = new ProgressTracker({ maxReattemptsPerStep: 10, similarityThreshold: 0 });
    loose.recordAndCheck('s', fail('timeout'));
    expect(loose.recordAndCheck('s', fail('completely different')).kind).toBe('stop');
  });

  it('a success breaks the chain of similar errors', () => {
    const tracker = new ProgressTracker({ maxReattemptsPerStep: 10 });
    tracker.recordAndCheck('s', fail('rate limited'));
    expect(tracker.recordAndCheck('s', { ok: true })).toEqual({ kind: 'continue' });
    expect(tracker.recordAndCheck('s', fail('rate limited')).kind).toBe('continue');
  });

  it('tracks steps independently, and beginStep restarts a stopped step', () => {
    const tracker = new ProgressTracker({ maxReattemptsPerStep: 1 });
    tracker.beginStep('a');
    tracker.beginStep('b');
    tracker.recordAndCheck('a', fail(distinct[0] as string));
    expect(tracker.recordAndCheck('a', fail(distinct[1] as string)).kind).toBe('stop');
    expect(tracker.recordAndCheck('b', fail(distinct[2] as string)).kind).toBe('continue');
    tracker.beginStep('a');
    expect(tracker.attempts('a')).toBe(0);
    expect(tracker.recordAndCheck('a', fail(distinct[3] as string)).kind).toBe('continue');
  });

  it('treats a missing error text as empty, so two of them in a row are stuck', () => {
    const tracker = new ProgressTracker({ maxReattemptsPerStep: 5 });
    tracker.recordAndCheck('s', { ok: false });
    expect(tracker.recordAndCheck('s', { ok: false }).kind).toBe('stop');
  });

  it('stays cheap on huge error outputs (capped comparison)', () => {
    const tracker = new ProgressTracker({ maxReattemptsPerStep: 5 });
    const huge = 'stack frame line\n'.repeat(70_000);
    const started = performance.now();
    tracker.recordAndCheck('s', fail(`A ${huge}`));
    const decision = tracker.recordAndCheck('s', fail(`B ${huge}`));
    expect(performance.now() - started).toBeLessThan(200);
    expect(decision.kind).toBe('stop');
  });

  it('rejects nonsensical options with a ConfigurationError', () => {
    expect(() => new ProgressTracker({ maxReattemptsPerStep: -1 })).toThrow(ConfigurationError);
    expect(() => new ProgressTracker({ maxReattemptsPerStep: 1.5 })).toThrow(ConfigurationError);
    expect(() => new ProgressTracker({ similarityThreshold: 1.2 })).toThrow(ConfigurationError);
    expect(() => new ProgressTracker({ similarityThreshold: Number.NaN })).toThrow(ConfigurationError);
  });
});
