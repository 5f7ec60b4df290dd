/**
 * DoomLoopDetector and the stuck guard: repeated identical calls and near-identical consecutive
 * errors, in stop and redirect modes, across act phases of one run.
 */
import { describe, expect, it } from 'vitest';
import type { ActCall, ToolOutcome } from '../../src/core/run.ts';
import { ConfigurationError } from '../../src/core/errors.ts';
import type { LoopEvent } from '../../src/core/loopEvent.ts';
import { DoomLoopDetector } from '../../src/progress/doomLoop.ts';
import { createStuckGuard } from '../../src/progress/stuckGuard.ts';

let n = 0;
function act(name: string, args: unknown, content = 'ok', isError = false): [ActCall, ToolOutcome] {
  const id = `c${n++}`;
  return [
    { index: 0, call: { id, name, arguments: JSON.stringify(args) }, arguments: args },
    { toolCallId: id, tool: name, status: isError ? 'error' : 'ok', content, isError },
  ];
}
/** Feed one call per act phase, as a model calling one tool per turn would. */
function feed(detector: DoomLoopDetector, phase: [ActCall, ToolOutcome]) {
  return detector.check([phase[0]], [phase[1]]);
}

describe('DoomLoopDetector', () => {
  it('stops on the fifth identical call in a row by default', () => {
    const detector = new DoomLoopDetector();
    for (let i = 0; i < 4; i++) expect(feed(detector, act('search', { q: 'x', page: 1 })).stuck).toBeUndefined();
    // Key order does not matter: the arguments are compared as canonical JSON.
    const fifth = feed(detector, act('search', { page: 1, q: 'x' }));
    expect(fifth.stuck?.reason).toBe('the model called "search" with the same arguments 5 times in a row');
    expect(fifth.detections).toEqual([{ reason: fifth.stuck?.reason, action: 'stop' }]);
  });

  it('does not count calls with different arguments, or a different call in between', () => {
    const detector = new DoomLoopDetector({ maxRepeats: 2 });
    expect(feed(detector, act('search', { q: 'a' })).stuck).toBeUndefined();
    expect(feed(detector, act('search', { q: 'b' })).stuck).toBeUndefined();
    expect(feed(detector, act('read', { q: 'b' })).stuck).toBeUndefined();
    expect(feed(detector, act('search', { q: 'b' })).stuck).toBeUndefined();
    expect(feed(detector, act('search', { q: 'b' })).stuck).toBeDefined();
  });

  it('counts identical calls within one act phase too', () => {
    const detector = new DoomLoopDetector({ maxRepeats: 3 });
    const phases = [act('ping', {}), act('ping', {}), act('ping', {})];
    const check = detector.check(
      phases.map((p) => p[0]),
      phases.map((p) => p[1]),
    );
    expect(check.stuck).toBeDefined();
    expect(check.outcomes).toHaveLength(3);
  });

  it('stops on near-identical consecutive errors from different calls', () => {
    const detector = new DoomLoopDetector({ maxRepeats: 3 });
    const error = (i: number) => act('fetch', { url: `https://example.com/${i}` }, `ECONNREFUSED 10.0.0.7:443 while fetching /${i}`, true);
    expect(feed(detector, error(1)).stuck).toBeUndefined();
    expect(feed(detector, error(2)).stuck).toBeUndefined();
    const third = feed(detector, error(3));
    expect(third.stuck?.reason).toMatch(/^3 consecutive tool errors were near-identical \(≥ 85% similar\): "ECONNREFUSED/);
  });

  it('resets the error streak on a success or a dissimilar error', () => {
    const detector = new DoomLoopDetector({ maxRepeats: 2 });
    expect(feed(detector, act('a', { i: 1 }, 'disk full', true)).stuck).toBeUndefined();
    expect(feed(detector, act('b', { i: 2 }, 'fine')).stuck).toBeUndefined();
    expect(feed(detector, act('c', { i: 3 }, 'disk full', true)).stuck).toBeUndefined();
    expect(feed(detector, act('d', { i: 4 }, 'unauthorised: token expired', true)).stuck).toBeUndefined();
    expect(feed(detector, act('e', { i: 5 }, 'unauthorised: token expired!', true)).stuck).toBeDefined();
  });

  it('in redirect mode prefixes a note to the repeated call, then stops if the model repeats again', () => {
    const detector = new DoomLoopDetector({ action: 'redirect', maxRepeats: 3 });
    feed(detector, act('search', { q: 'x' }, 'no results'));
    feed(detector, act('search', { q: 'x' }, 'no results'));
    const redirected = feed(detector, act('search', { q: 'x' }, 'no results'));
    expect(redirected.stuck).toBeUndefined();
    expect(redirected.detections).toEqual([{ reason: expect.stringMatching(/3 times in a row/) as unknown, action: 'redirect' }]);
    const content = redirected.outcomes[0]?.content ?? '';
    expect(content).toMatch(/^\[actorloop\] You have called "search" with the same arguments 3 times in a row/);
    expect(content).toMatch(/Change your approach/);
    expect(content.endsWith('\n\nno results')).toBe(true);
    const again = feed(detector, act('search', { q: 'x' }, 'no results'));
    expect(again.stuck?.reason).toMatch(/4 times in a row/);
    expect(again.detections.map((d) => d.action)).toEqual(['stop']);
  });

  it('redirects only once per run: a later, different loop stops', () => {
    const detector = new DoomLoopDetector({ action: 'redirect', maxRepeats: 2 });
    feed(detector, act('a', {}));
    expect(feed(detector, act('a', {})).detections.map((d) => d.action)).toEqual(['redirect']);
    expect(feed(detector, act('b', {})).stuck).toBeUndefined();
    expect(feed(detector, act('b', {})).stuck).toBeDefined();
  });

  it('rejects maxRepeats below 2 and thresholds outside [0, 1]', () => {
    expect(() => new DoomLoopDetector({ maxRepeats: 1 })).toThrow(ConfigurationError);
    expect(() => new DoomLoopDetector({ similarityThreshold: -0.1 })).toThrow(ConfigurationError);
  });

  it('rejects a compareChars that would make every two errors alike, and an unknown action', () => {
    // With nothing compared, five different errors in a row would stop the run as stuck.
    for (const compareChars of [0, -5, Number.NaN, 1.5]) {
      expect(() => new DoomLoopDetector({ compareChars })).toThrow(expect.objectContaining({ code: 'configuration', message: expect.stringMatching(/compareChars/) }));
    }
    expect(() => new DoomLoopDetector({ action: 'halt' as 'stop' })).toThrow(/action/);
    expect(new DoomLoopDetector({ compareChars: 1 }).action).toBe('stop');
  });
});

describe('createStuckGuard', () => {
  it('is a pass-through when turned off with false', () => {
    const [call, outcome] = act('x', {});
    const scope = { emit: () => undefined };
    const guard = createStuckGuard(false);
    for (let i = 0; i < 8; i++) expect(guard.check(scope, [call], [outcome])).toEqual({ outcomes: [outcome] });
    expect(guard.save(scope)).toBeUndefined();
  });

  it('detects with the defaults when not configured: the fifth identical call stops', () => {
    const [call, outcome] = act('x', {});
    const scope = { emit: () => undefined };
    const guard = createStuckGuard(undefined);
    for (let i = 0; i < 4; i++) expect(guard.check(scope, [call], [outcome]).stuck).toBeUndefined();
    expect(guard.check(scope, [call], [outcome]).stuck?.reason).toMatch(/5 times in a row/);
  });

  it('keeps one detector per run scope and emits stuck.detected for each detection', () => {
    const guard = createStuckGuard({ maxRepeats: 2 });
    const events: LoopEvent[] = [];
    const runA = { emit: (e: LoopEvent) => events.push(e) };
    const runB = { emit: (e: LoopEvent) => events.push(e) };
    const [call, outcome] = act('x', {});
    expect(guard.check(runA, [call], [outcome]).stuck).toBeUndefined();
    // Another run's identical call does not continue run A's streak.
    expect(guard.check(runB, [call], [outcome]).stuck).toBeUndefined();
    const stuck = guard.check(runA, [call], [outcome]);
    expect(stuck.stuck?.reason).toMatch(/2 times in a row/);
    expect(events).toEqual([{ type: 'stuck.detected', reason: stuck.stuck?.reason, action: 'stop' }]);
  });

  it('validates its options when created', () => {
    expect(() => createStuckGuard({ maxRepeats: 0 })).toThrow(ConfigurationError);
  });
});
