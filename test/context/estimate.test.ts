import { describe, expect, it, vi } from 'vitest';
import { createTokenCounter, estimateMessageTokens, estimateTokens } from '../../src/context/estimate.ts';
import { DEFAULTS } from '../../src/core/defaults.ts';
import { assistant, call, result, sys, user } from './support.ts';

describe('token estimator', () => {
  it('counts chars/4 rounded up plus 4 tokens of overhead per message by default', () => {
    expect(DEFAULTS.context.messageOverheadTokens).toBe(4);
    expect(estimateMessageTokens(user(''))).toBe(4);
    expect(estimateMessageTokens(user('a'))).toBe(5);
    expect(estimateMessageTokens(user('abcd'))).toBe(5);
    expect(estimateMessageTokens(user('abcde'))).toBe(6);
    expect(estimateTokens([sys('Be brief.'), user('What is 6 * 7?')])).toBe(7 + 8);
    expect(estimateTokens([])).toBe(0);
  });

  it('counts text by its UTF-8 bytes, as byte-level tokenizers read it, so Chinese text is not undercounted', () => {
    // Tokenizers spend a token or more per Chinese character; by UTF-16 length/4 the estimate gave a quarter token.
    const chinese = '今天天气很好，我们去公园散步吧。模型会把文本切分成词元，然后逐个读取。上海和北京都是很大的城市。';
    expect(estimateMessageTokens(user(chinese), { messageOverheadTokens: 0 })).toBe(Math.ceil(Buffer.byteLength(chinese) / 4));
    expect(estimateMessageTokens(user(chinese), { messageOverheadTokens: 0 })).toBeGreaterThanOrEqual(0.7 * chinese.length);
    // ASCII is one byte a character: the same estimate as before.
    expect(estimateMessageTokens(user('abcde'), { messageOverheadTokens: 0 })).toBe(2);
    // Every piece is measured so: tool call arguments and results too.
    expect(estimateMessageTokens(assistant([call('c1', 'f', '{"城市":"北京"}')]), { messageOverheadTokens: 0 })).toBe(Math.ceil((2 + 1 + Buffer.byteLength('{"城市":"北京"}')) / 4));
    expect(estimateMessageTokens(result('c1', '晴天', 'f'), { messageOverheadTokens: 0 })).toBe(Math.ceil((6 + 2 + 1) / 4));
  });

  it('counts tool call ids, names and argument texts, and the id and name of a result', () => {
    // 'c1' + 'add' + '{"a":1,"b":2}' = 2 + 3 + 13 = 18 chars → 5 tokens; content null.
    expect(estimateMessageTokens(assistant([call('c1', 'add', '{"a":1,"b":2}')]))).toBe(4 + 5);
    // 'c1' + 'add' + '3' = 6 chars → 2 tokens.
    expect(estimateMessageTokens(result('c1', '3', 'add'))).toBe(4 + 2);
    expect(estimateMessageTokens(result('c1', '3'))).toBe(4 + 1);
  });

  it('never estimates below chars/4 of the whole conversation', () => {
    const messages = [sys('x'.repeat(101)), user('y'.repeat(7)), assistant([call('id', 'n', 'z'.repeat(33))], 'w'), result('id', 'v'.repeat(999))];
    const chars = 101 + 7 + (2 + 1 + 33 + 1) + (999 + 2);
    expect(estimateTokens(messages)).toBeGreaterThanOrEqual(Math.ceil(chars / 4) + 4 * messages.length);
  });

  it('takes an exact tokenizer and a custom overhead instead', () => {
    const words = (text: string) => text.split(/\s+/u).filter(Boolean).length;
    expect(estimateMessageTokens(user('one two three'), { tokenizer: words })).toBe(4 + 3);
    expect(estimateMessageTokens(user('one two three'), { tokenizer: words, messageOverheadTokens: 0 })).toBe(3);
    // Pieces of a call are counted separately: id 1 + name 1 + args 2.
    expect(estimateMessageTokens(assistant([call('c1', 'add', 'a b')]), { tokenizer: words, messageOverheadTokens: 0 })).toBe(4);
  });

  it('falls back to chars/4 for a piece a broken tokenizer counts as NaN or negative', () => {
    expect(estimateMessageTokens(user('abcdefgh'), { tokenizer: () => Number.NaN })).toBe(4 + 2);
    expect(estimateMessageTokens(user('abcdefgh'), { tokenizer: () => -5 })).toBe(4 + 2);
  });

  it('measures each message object once when counting with a cache', () => {
    const tokenizer = vi.fn((text: string) => text.length);
    const tokensOf = createTokenCounter({ tokenizer });
    const message = user('hello');
    expect(tokensOf(message)).toBe(9);
    expect(tokensOf(message)).toBe(9);
    expect(tokenizer).toHaveBeenCalledTimes(1);
    // An equal but distinct object is measured on its own.
    expect(tokensOf(user('hello'))).toBe(9);
    expect(tokenizer).toHaveBeenCalledTimes(2);
  });
});
