/**
 * Call keys are written to run logs and matched again on resume: the same call must get the same
 * key in every version, or a resumed run would run a recorded call again.
 */
import { describe, expect, it } from 'vitest';
import { callKey } from '../../src/executor/callKey.ts';

describe('call keys', () => {
  it('are the keys earlier versions wrote for the same calls, whatever the order of their arguments', () => {
    expect(callKey('run_1', 2, 0, 'add', { b: 2, a: 1 })).toEqual({ key: 'run_1:2:0:add:KZIXqSJcp6tPuGSto3dgzO', args: 'KZIXqSJcp6tPuGSto3dgzO' });
    expect(callKey('run_1', 2, 0, 'add', { a: 1, b: 2 }).key).toBe('run_1:2:0:add:KZIXqSJcp6tPuGSto3dgzO');
    expect(callKey('run_1', 0, 1, 'grüße', { text: 'héllo ✓', n: [1, 2] }).key).toBe('run_1:0:1:grüße:1ny5DpGmceKSSNPpTzRiPU');
    expect(callKey('run_1', 0, 0, 'none', undefined).key).toBe('run_1:0:0:none:RLYhuqmI3zacp3jhX3e4-B');
  });

  it('differ for another tool, position or iteration', () => {
    const base = callKey('run_1', 2, 0, 'add', { a: 1 });
    expect(callKey('run_1', 2, 0, 'sub', { a: 1 }).args).not.toBe(base.args);
    expect(callKey('run_1', 2, 1, 'add', { a: 1 }).key).not.toBe(base.key);
    expect(callKey('run_1', 3, 0, 'add', { a: 1 }).key).not.toBe(base.key);
  });
});
