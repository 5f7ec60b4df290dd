/**
 * A durable run's history is checked against the message schema when it is queued: a malformed
 * message is refused there, naming it, instead of failing the run in a worker as a corrupt row.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/index.ts';
import { ConversationError } from '../../src/errors.ts';
import type { Message } from '../../src/core/messages.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { freshDatabase, postgresMissing } from '../support/postgres.ts';
import { inProcess, type InProcess } from './fixtures/agents.ts';

const missing = postgresMissing();

describe.skipIf(missing !== '')('a durable run given a malformed history', () => {
  let setup: InProcess | undefined;

  beforeAll(async () => {
    setup = await inProcess(await freshDatabase('history'), 4);
  });
  afterAll(async () => {
    await setup?.close();
  });

  const queued = async (): Promise<number> => Number((await setup?.pool.query<{ n: string }>('SELECT count(*) AS n FROM actorloop.actors'))?.rows[0]?.n);

  const malformed: [string, unknown][] = [
    ['a message of an unknown role', { role: 'wizard', content: 'Abracadabra.' }],
    ['a user message whose content is a number', { role: 'user', content: 42 }],
    ['an assistant message whose tool call has no name', { role: 'assistant', content: null, toolCalls: [{ id: 'c1', arguments: '{}' }] }],
  ];

  for (const [what, message] of malformed) {
    it(`is refused when queued, naming the message, for ${what}`, async () => {
      const agent = createAgent({ id: `history-${what.length}`, model: scriptedModel([{ text: 'never asked' }], { recordCalls: false }), runtime: setup?.runtime });
      const before = await queued();
      const history = [{ role: 'user', content: 'Hello.' }, { role: 'assistant', content: 'Hi.' }, message] as Message[];
      // `start` refuses bad input as it is called, as it does a bad image part.
      const started = (): Promise<unknown> => {
        try {
          return agent.start('Go on.', { history }).result;
        } catch (error) {
          return Promise.reject(error as Error);
        }
      };
      for (const attempt of [() => agent.run('Go on.', { history }), started]) {
        const error = await attempt().then(
          () => undefined,
          (thrown: unknown) => thrown,
        );
        expect(error).toBeInstanceOf(ConversationError);
        expect(error).toMatchObject({ code: 'invalid_conversation' });
        expect((error as Error).message).toMatch(/Message 2\b/);
      }
      expect(await queued()).toBe(before);
    }, 60_000);
  }

  it('is refused by the runtime itself, for a run queued without createAgent (a session\'s turn, say)', async () => {
    const unused = (): never => {
      throw new Error('not called: the run is refused before it is queued');
    };
    const bound = setup?.runtime.bind({
      agentId: 'history-bound',
      provider: scriptedModel([{ text: 'never asked' }], { recordCalls: false }),
      tools: [],
      redact: (value) => value,
      redactCopy: (value) => value,
      redactStream: unused,
      tool: () => Promise.resolve(undefined),
      start: unused,
      resume: unused,
    });
    const before = await queued();
    const history = [{ role: 'user', content: 'Hello.' }, { role: 'wizard', content: 'Abracadabra.' }] as Message[];
    const error = await bound?.run('Go on.', { history }).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(ConversationError);
    expect((error as Error).message).toMatch(/Message 1 at role/);
    expect(await queued()).toBe(before);
  }, 60_000);

  it('runs with a well-formed history', async () => {
    const agent = createAgent({ id: 'history-ok', model: scriptedModel([{ text: 'Going on.' }], { recordCalls: false }), runtime: setup?.runtime });
    const history: Message[] = [{ role: 'user', content: 'Hello.' }, { role: 'assistant', content: 'Hi.' }];
    const result = await agent.run('Go on.', { history });
    expect(result.text).toBe('Going on.');
  }, 60_000);
});
