import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { unansweredToolCalls, validateConversation } from '../../src/conversation/validate.ts';
import type { Message } from '../../src/core/messages.ts';

/** One turn: a user message, an assistant message issuing calls, results for some of them. */
const turnArb = fc.record({
  system: fc.option(fc.string(), { nil: undefined }),
  user: fc.string(),
  text: fc.option(fc.string(), { nil: null }),
  calls: fc.array(fc.record({ name: fc.string({ minLength: 1 }), args: fc.json() }), { maxLength: 4 }),
  // For each call: answered or not, and a sort key to shuffle the result order.
  answers: fc.array(fc.record({ answered: fc.boolean(), order: fc.nat() }), { minLength: 4, maxLength: 4 }),
});

interface Built {
  readonly messages: Message[];
  /** Index of each assistant message with at least one answered call. */
  readonly issuersWithResults: number[];
  readonly openIds: string[];
}

type Turn = typeof turnArb extends fc.Arbitrary<infer T> ? T : never;

function build(turns: Turn[]): Built {
  const messages: Message[] = [];
  const issuersWithResults: number[] = [];
  const openIds: string[] = [];
  turns.forEach((turn, t) => {
    if (turn.system !== undefined) messages.push({ role: 'system', content: turn.system });
    messages.push({ role: 'user', content: turn.user });
    const ids = turn.calls.map((_, i) => `call_${t}_${i}`);
    const toolCalls = turn.calls.map((c, i) => ({ id: ids[i] as string, name: c.name, arguments: c.args }));
    const issuer = messages.length;
    messages.push(toolCalls.length > 0 ? { role: 'assistant', content: turn.text, toolCalls } : { role: 'assistant', content: turn.text });
    const answered = ids
      .map((id, i) => ({ id, answer: turn.answers[i] ?? { answered: true, order: 0 } }))
      .filter((x) => x.answer.answered)
      .sort((a, b) => a.answer.order - b.answer.order);
    for (const { id } of answered) messages.push({ role: 'tool', toolCallId: id, content: `result of ${id}` });
    if (answered.length > 0) issuersWithResults.push(issuer);
    for (const id of ids) if (!answered.some((a) => a.id === id)) openIds.push(id);
  });
  return { messages, issuersWithResults, openIds };
}

const conversationArb = fc.array(turnArb, { minLength: 1, maxLength: 6 }).map(build);

describe('validateConversation (property)', () => {
  it('accepts every generated valid conversation, and reports its open calls', () => {
    fc.assert(
      fc.property(conversationArb, ({ messages, openIds }) => {
        expect(validateConversation(messages)).toEqual({ ok: true, messages });
        expect(unansweredToolCalls(messages).map((c) => c.id)).toEqual(openIds);
      }),
      { numRuns: 200 },
    );
  });

  it('rejects with orphan_tool_result once the assistant message that issued a call is removed', () => {
    const withResults = conversationArb.filter((built) => built.issuersWithResults.length > 0);
    fc.assert(
      fc.property(withResults, fc.nat(), ({ messages, issuersWithResults }, pick) => {
        const removed = issuersWithResults[pick % issuersWithResults.length] as number;
        const broken = messages.filter((_, i) => i !== removed);
        const result = validateConversation(broken);
        expect(result.ok).toBe(false);
        if (result.ok) return;
        expect(result.issues.length).toBeGreaterThan(0);
        expect(result.issues.every((issue) => issue.code === 'orphan_tool_result')).toBe(true);
        // Each orphan is a tool message that directly followed the removed issuer.
        for (const issue of result.issues) expect(broken[issue.index]?.role).toBe('tool');
      }),
      { numRuns: 200 },
    );
  });
});
