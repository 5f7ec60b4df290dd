import { describe, expect, it } from 'vitest';
import { and, assign, createMachine, not, or } from 'xstate';
import { actionNames, delayName, guardName, invokeName, mermaidId, mermaidText, wrapWords } from '../../src/viz/labels.ts';

describe('diagram labels', () => {
  it('replaces the characters that end a Mermaid statement or open an HTML tag', () => {
    expect(mermaidText('a;\n b <i>"c"</i>')).toBe("a, b ‹i›'c'‹/i›");
    expect(mermaidText('  plain: text [ok] #1 & 2 ')).toBe('plain: text [ok] #1 & 2');
  });

  it('wraps prose at word boundaries and keeps over-long words whole', () => {
    expect(wrapWords('one two three four', 9)).toEqual(['one two', 'three', 'four']);
    expect(wrapWords('supercalifragilistic is long', 5)).toEqual(['supercalifragilistic', 'is', 'long']);
    expect(wrapWords('  ', 10)).toEqual([]);
  });

  it('names string, object, higher-order and inline guards', () => {
    expect(guardName('isReady')).toBe('isReady');
    expect(guardName({ type: 'isAdmin', params: { level: 2 } })).toBe('isAdmin');
    expect(guardName(not('isBanned'))).toBe('!isBanned');
    expect(guardName(or(['a', and(['b', 'c'])]))).toBe('(a || (b && c))');
    expect(guardName(() => true)).toBe('guard');
  });

  it('names only named actions, not inline ones', () => {
    expect(actionNames(['track', { type: 'notify', params: {} }, assign({}), () => {}])).toEqual(['track', 'notify']);
  });

  it('names delays and invoked actors as written', () => {
    expect(delayName('recoveryTimeout')).toBe('recoveryTimeout');
    expect(delayName(250)).toBe('250ms');
    expect(delayName(() => 1)).toBe('delay');
    expect(invokeName({ src: 'reason', id: '0.agent.running.reason' })).toBe('reason');
    expect(invokeName({ src: {}, id: 'inline-child' })).toBe('inline-child');
  });

  it('builds ids from the state path, hex-coding punctuation', () => {
    const machine = createMachine({ id: 'm', initial: 'a', states: { a: { initial: 'b-c', states: { 'b-c': {} } } } });
    expect(mermaidId(machine.root)).toBe('S');
    expect(mermaidId(machine.root.states.a!.states['b-c']!)).toBe('S_a_bx2dxc');
  });
});
