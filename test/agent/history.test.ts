/**
 * A run's history is checked against the message schema before the run starts: a malformed
 * message is refused naming it, never sent to the model nor misread as an image part.
 */
import { describe, expect, it } from 'vitest';
import { createAgent } from '../../src/index.ts';
import { ConversationError } from '../../src/errors.ts';
import type { Message } from '../../src/core/messages.ts';
import { scriptedModel } from '../../src/testing/index.ts';

const malformed: [string, unknown, RegExp][] = [
  ['a message of an unknown role', { role: 'wizard', content: 'Abracadabra.' }, /Message 2 at role/],
  ['a user message whose content is a number', { role: 'user', content: 42 }, /Message 2 at content/],
  ['an assistant message whose tool call has no name', { role: 'assistant', content: null, toolCalls: [{ id: 'c1', arguments: '{}' }] }, /Message 2 at toolCalls/],
];

describe('a run in process given a malformed history', () => {
  for (const [what, message, names] of malformed) {
    it(`is refused before the model is asked, naming the message, for ${what}`, async () => {
      const model = scriptedModel([{ text: 'never asked' }]);
      const agent = createAgent({ id: 'history', model });
      const history = [{ role: 'user', content: 'Hello.' }, { role: 'assistant', content: 'Hi.' }, message] as Message[];
      const refused = await agent.run('Go on.', { history }).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(ConversationError);
      expect((refused as ConversationError).code).toBe('invalid_conversation');
      expect((refused as Error).message).toMatch(names);
      expect(model.calls).toHaveLength(0);
    });
  }

  it('runs with a well-formed history, which reaches the model as given', async () => {
    const model = scriptedModel([{ text: 'Done.' }]);
    const agent = createAgent({ id: 'history', model });
    const history: Message[] = [{ role: 'user', content: 'Hello.' }, { role: 'assistant', content: 'Hi.' }];
    const result = await agent.run('Go on.', { history });
    expect(result.status).toBe('done');
    expect(model.calls[0]?.messages.filter((m) => m.role !== 'system').map((m) => m.content)).toEqual(['Hello.', 'Hi.', 'Go on.']);
  });
});
