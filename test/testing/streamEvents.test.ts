import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { completionEvents, splitArguments, splitWords } from '../../src/testing/streamEvents.ts';
import type { Completion } from '../../src/core/provider.ts';

describe('splitWords', () => {
  it('splits after whitespace and keeps every character', () => {
    expect(splitWords(' Hello big  world\n')).toEqual([' Hello ', 'big  ', 'world\n']);
    expect(splitWords('')).toEqual([]);
    expect(splitWords('   ')).toEqual(['   ']);
  });

  it('always concatenates back to the input', () => {
    fc.assert(
      fc.property(fc.string(), (text) => {
        expect(splitWords(text).join('')).toBe(text);
      }),
    );
  });
});

/** No lone UTF-16 surrogates. */
const wellFormed = /^(?:[^\uD800-\uDFFF]|[\uD800-\uDBFF][\uDC00-\uDFFF])*$/;

describe('splitArguments', () => {
  it('splits short arguments in two and long ones in 16-character pieces', () => {
    expect(splitArguments('{"a":1}')).toEqual(['{"a"', ':1}']);
    expect(splitArguments('x'.repeat(40)).map((p) => p.length)).toEqual([16, 16, 8]);
    expect(splitArguments('{')).toEqual(['{']);
    expect(splitArguments('')).toEqual([]);
  });

  it('never splits a surrogate pair', () => {
    expect(splitArguments('a😀')).toEqual(['a', '😀']);
    expect(splitArguments('😀')).toEqual(['😀']);
    expect(splitArguments('😀😀')).toEqual(['😀', '😀']);
  });

  it('gives 2+ pieces that concatenate back to the input', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 60 }), (args) => {
        const pieces = splitArguments(args);
        expect(pieces.join('')).toBe(args);
        for (const piece of pieces) expect(piece).toMatch(wellFormed);
        if ([...args].length >= 2) expect(pieces.length).toBeGreaterThanOrEqual(2);
      }),
    );
  });
});

describe('completionEvents', () => {
  it('emits text, then tool calls by index, then done', () => {
    const completion: Completion = {
      text: 'hi',
      toolCalls: [{ id: 'c', name: 'f', arguments: '{}' }],
      finishReason: 'tool_calls',
      usage: { promptTokens: 1, completionTokens: 1, totalTokens: 2 },
      model: 'm',
    };
    expect([...completionEvents(completion)].map((e) => e.type)).toEqual([
      'text.delta',
      'toolcall.delta',
      'toolcall.delta',
      'toolcall.delta',
      'done',
    ]);
  });
});
