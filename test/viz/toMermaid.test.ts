import { describe, expect, it } from 'vitest';
import { and, createMachine, fromPromise, not, setup } from 'xstate';
import { toMermaid } from '../../src/viz/toMermaid.ts';

/** The diagram's lines without indentation, for order-insensitive membership checks. */
function lines(text: string): string[] {
  return text.split('\n').map((l) => l.trim());
}

const fetcher = setup({
  actors: { fetchUser: fromPromise(async () => 'user'), audit: fromPromise(async () => undefined) },
  guards: { isReady: () => true, isAdmin: () => true, isBanned: () => false },
  actions: { track: () => {}, notify: () => {} },
  delays: { slow: 5_000 },
}).createMachine({
  id: 'fetcher',
  initial: 'idle',
  states: {
    idle: {
      description: 'Nothing in flight; waiting for a request.',
      on: {
        'user.fetch': [{ guard: 'isReady', target: 'loading', actions: 'track' }, { target: 'failed' }],
        'user.ping': { actions: 'notify' },
      },
    },
    loading: {
      invoke: {
        src: 'fetchUser',
        onDone: { target: 'session', actions: 'track' },
        onError: 'failed',
      },
      after: { slow: 'failed', 500: { target: 'idle', guard: { type: 'isAdmin' } } },
    },
    session: {
      description: 'Signed in; the inner states track the page.',
      initial: 'browsing',
      states: {
        browsing: { on: { 'page.edit': 'editing' } },
        editing: {
          invoke: [
            { src: 'audit', onDone: 'browsing', onError: '#fetcher.failed' },
            { src: 'fetchUser', onError: '#fetcher.failed' },
          ],
          always: { guard: and(['isAdmin', not('isBanned')]), target: 'saved' },
        },
        saved: { type: 'final' },
      },
      onDone: 'done',
    },
    failed: { always: [{ guard: 'isReady', target: 'idle' }, { target: 'done' }] },
    done: { type: 'final', description: 'Finished; the actor stops.' },
  },
});

describe('toMermaid', () => {
  it('writes a stateDiagram-v2 with the initial state and final states marked', () => {
    const out = lines(toMermaid(fetcher));
    expect(out.slice(0, 2)).toEqual(['stateDiagram-v2', 'direction TB']);
    expect(out).toContain('[*] --> S_idle');
    expect(out).toContain('S_done --> [*]');
    expect(out).not.toContain('S_idle --> [*]');
  });

  it('draws nested states inside a composite state with their own initial and final markers', () => {
    const text = toMermaid(fetcher);
    const block = text.slice(text.indexOf('state "session" as S_session {'), text.indexOf('\n  }\n'));
    expect(block).toContain('[*] --> S_session_browsing');
    expect(block).toContain('state "editing" as S_session_editing');
    expect(block).toContain('S_session_browsing --> S_session_editing : page.edit');
    expect(block).toContain('S_session_saved --> [*]');
    // A composite state's onDone leaves the box, so it is written outside it.
    expect(block).not.toContain('S_session --> S_done');
    expect(lines(text)).toContain('S_session --> S_done : onDone');
  });

  it('labels transitions with their event, named guard and named actions', () => {
    const out = lines(toMermaid(fetcher));
    expect(out).toContain('S_idle --> S_loading : user.fetch [isReady] / track');
    expect(out).toContain('S_idle --> S_failed : user.fetch');
  });

  it('names higher-order and object guards as written', () => {
    const out = lines(toMermaid(fetcher));
    expect(out).toContain('S_session_editing --> S_session_saved : always [(isAdmin && !isBanned)]');
    expect(out).toContain('S_loading --> S_idle : after 500ms [isAdmin]');
  });

  it('labels eventless transitions "always", in priority order', () => {
    const out = lines(toMermaid(fetcher));
    const guarded = out.indexOf('S_failed --> S_idle : always [isReady]');
    const fallback = out.indexOf('S_failed --> S_done : always');
    expect(guarded).toBeGreaterThan(-1);
    expect(fallback).toBeGreaterThan(guarded);
  });

  it('labels delayed transitions with the delay name or milliseconds', () => {
    const out = lines(toMermaid(fetcher));
    expect(out).toContain('S_loading --> S_failed : onError<br/>after slow');
    expect(out.some((l) => l.includes('xstate.after'))).toBe(false);
  });

  it('shows invoked actors in the state box and labels their onDone and onError', () => {
    const out = lines(toMermaid(fetcher));
    expect(out).toContain('S_loading : invoke fetchUser');
    expect(out).toContain('S_loading --> S_session : onDone / track');
    // With two invokes in one state, the label says whose onDone/onError it is.
    expect(out).toContain('S_session_editing : invoke audit');
    expect(out).toContain('S_session_editing --> S_session_browsing : onDone audit');
    expect(out).toContain('S_session_editing --> S_failed : onError audit<br/>onError fetchUser');
    expect(out.some((l) => l.includes('xstate.done') || l.includes('xstate.error'))).toBe(false);
  });

  it('draws a transition without target as a self-loop', () => {
    expect(lines(toMermaid(fetcher))).toContain('S_idle --> S_idle : user.ping / notify');
  });

  it('writes descriptions in the box by default, as notes on request, or not at all', () => {
    const inline = lines(toMermaid(fetcher, { wrap: 24 }));
    expect(inline).toContain('S_idle : Nothing in flight,');
    expect(inline).toContain('S_idle : waiting for a request.');
    // A composite state has no room in its box: its description is always a note.
    expect(inline).toContain('note right of S_session');
    const notes = lines(toMermaid(fetcher, { descriptions: 'notes' }));
    expect(notes).toContain('note right of S_idle');
    expect(notes).toContain('Nothing in flight, waiting for a request.');
    const none = toMermaid(fetcher, { descriptions: 'none' });
    expect(none).not.toContain('note');
    expect(none).not.toContain('Nothing in flight');
  });

  it('draws transitions of the machine itself from a dashed "any state" box', () => {
    const machine = createMachine({
      id: 'door',
      initial: 'open',
      on: { 'door.reset': '.closed' },
      states: { open: { on: { 'door.close': 'closed' } }, closed: {} },
    });
    const out = lines(toMermaid(machine));
    expect(out).toContain('state "door" as S');
    expect(out).toContain('S : any state');
    expect(out).toContain('class S anyState');
    expect(out).toContain('S --> S_closed : door.reset');
    // Without behaviour of its own the machine has no such box.
    expect(toMermaid(fetcher)).not.toContain('as S\n');
  });

  it('separates parallel regions and marks history states', () => {
    const machine = createMachine({
      id: 'editor',
      type: 'parallel',
      states: {
        bold: { initial: 'off', states: { off: { on: { 'bold.toggle': 'on' } }, on: {}, hist: { type: 'history', history: 'deep' } } },
        italic: { initial: 'off', states: { off: {}, on: {} } },
      },
    });
    const out = lines(toMermaid(machine));
    const bold = out.indexOf('state "bold" as S_bold {');
    const separator = out.indexOf('--');
    const italic = out.indexOf('state "italic" as S_italic {');
    expect(bold).toBeGreaterThan(-1);
    expect(separator).toBeGreaterThan(bold);
    expect(italic).toBeGreaterThan(separator);
    expect(out).toContain('state "H*" as S_bold_hist');
  });

  it('keeps text from breaking the Mermaid grammar', () => {
    const machine = createMachine({
      id: 'odd',
      initial: 'a',
      states: { a: { description: 'x; <b>bold</b> "quoted"', on: { 'go;now': 'b' } }, b: {} },
    });
    const text = toMermaid(machine);
    expect(lines(text)).toContain("S_a : x, ‹b›bold‹/b› 'quoted'");
    expect(lines(text)).toContain('S_a --> S_b : go,now');
    // A `;` would end the statement early; `<`…`>` would be read as HTML; `"` ends a state name.
    for (const line of text.split('\n')) {
      const statement = line.replace(/<br\/>| --> /g, ' ').replace(/^\s*state "[^"]*" as /, '');
      expect(statement).not.toMatch(/[;<>"]/);
    }
  });

  it('gives every state a distinct id even when keys differ only in punctuation', () => {
    const machine = createMachine({
      id: 'ids',
      initial: 'a_b',
      states: { a_b: { on: { go: 'end' } }, 'a.b': {}, end: {} },
    });
    const out = lines(toMermaid(machine));
    const declared = out.filter((l) => l.startsWith('state ')).map((l) => l.split(' as ')[1]);
    expect(new Set(declared).size).toBe(3);
    expect(out).toContain('state "end" as S_end');
  });

  it('is deterministic: the same definition gives the same text', () => {
    expect(toMermaid(fetcher)).toBe(toMermaid(fetcher));
    expect(toMermaid(fetcher, { direction: 'LR' })).toContain('direction LR');
  });
});
