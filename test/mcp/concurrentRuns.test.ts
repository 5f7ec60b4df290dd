/**
 * Two runs of one agent with tool calls in flight on the same streamable HTTP server at once:
 * each question the server asks on a call's stream is that call's run's human turn, and each
 * answer goes back to the call that asked. Over stdio nothing ties a request to a call, so a
 * question asked while two runs have calls in flight is refused, saying why.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/agent/createAgent.ts';
import type { AgentRun } from '../../src/agent/types.ts';
import type { LoopEvent } from '../../src/core/loopEvent.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { startOAuthFixture, type OAuthFixture } from './fixtures/oauthServer.ts';
import { controlled } from './support.ts';

/** Resolves with the `human.awaiting` event of the run's first question; rejects if the run ends without one. */
function question(run: AgentRun): Promise<Extract<LoopEvent, { type: 'human.awaiting' }>> {
  return new Promise((resolve, reject) => {
    const subscription = run.events$.subscribe(({ event }) => {
      if (event.type === 'human.awaiting' && event.kind === 'elicitation') {
        queueMicrotask(() => subscription.unsubscribe());
        resolve(event);
      }
    });
    void run.settled.then((settled) => reject(new Error(`the run ended (${settled.status}) without a question: ${JSON.stringify(settled.text)}`)));
  });
}

describe('MCP requests of concurrent runs on one server', () => {
  let fixture: OAuthFixture | undefined;
  afterEach(async () => {
    await fixture?.stop();
    fixture = undefined;
  });

  it("puts each run's question to that run and sends each answer back to the call that asked", async () => {
    fixture = await startOAuthFixture({ auth: false });
    // The task names the label; the tool's result ends the run.
    const model = scriptedModel((request) => {
      const result = request.messages.find((message) => message.role === 'tool');
      if (result !== undefined) return { text: String(result.content) };
      const label = /label (\w+)/.exec(String(request.messages.find((message) => message.role === 'user')?.content))?.[1] ?? '?';
      return { toolCalls: [{ name: 'web_ask', arguments: { label } }] };
    });
    const agent = createAgent({ model, mcpServers: [{ name: 'web', url: fixture.url }] });
    try {
      const first = agent.start('Ask for label A.');
      const askedFirst = await question(first);
      // The second run's call starts while the first run's call still waits for its answer.
      const second = agent.start('Ask for label B.');
      const askedSecond = await question(second);
      expect(askedFirst.question).toMatchObject({ server: 'web', message: 'Your name, for A?' });
      expect(askedSecond.question).toMatchObject({ server: 'web', message: 'Your name, for B?' });
      expect([first.phase(), second.phase()]).toEqual(['awaitingHuman', 'awaitingHuman']);

      second.approve(undefined, { answer: { name: 'Bea' } });
      first.approve(undefined, { answer: { name: 'Ada' } });
      const [a, b] = await Promise.all([first.result, second.result]);
      expect(a.text).toContain('A: {"action":"accept","content":{"name":"Ada"}}');
      expect(b.text).toContain('B: {"action":"accept","content":{"name":"Bea"}}');
    } finally {
      await agent.close();
    }
  }, 60_000);

  it('over stdio refuses a question asked while calls of two runs are in flight, and still serves the run that was alone', async () => {
    const model = scriptedModel((request) => {
      const result = request.messages.find((message) => message.role === 'tool');
      return result === undefined ? { toolCalls: [{ name: 'ctl_ask', arguments: {} }] } : { text: String(result.content) };
    });
    const agent = createAgent({ model, mcpServers: [controlled('ctl')] });
    try {
      const first = agent.start('Ask me.');
      await question(first);
      const second = agent.start('Ask me too.');
      const refused = await second.result;
      expect(refused.text).toMatch(/refused: .*tool calls of 2 runs were in flight; .*over stdio only one run may have calls in flight/s);
      first.approve(undefined, { answer: { name: 'Ada', age: 36 } });
      expect((await first.result).text).toContain('"name":"Ada"');
    } finally {
      await agent.close();
    }
  }, 60_000);
});
