/** The requests a step stores for its model calls: scrubbed JSON copies, each message copied once while the agent's secrets stay the same. */
import { describe, expect, it } from 'vitest';
import type { Message } from '../../src/core/messages.ts';
import { StepContext, type EffectRequest } from '../../src/postgres/durable.ts';
import { StepRun } from '../../src/postgres/stepStore.ts';
import { createRedactor, type Redactor } from '../../src/security/redactor.ts';

const SECRET = 'sk-live-0123456789abcdef';

function stepContext(redactor: Redactor = createRedactor({ secrets: [SECRET] }, {})): StepContext {
  return new StepContext(new StepRun('run_1', 'agent', 'task', 0, [], [], 0), new Map(), { redact: redactor.deep, redactCopy: redactor.copy });
}

const TOOL = { name: 'noop', description: `uses ${SECRET}`, parameters: { type: 'object' } };

const modelCall = (messages: readonly Message[]): (() => EffectRequest) => () => ({
  kind: 'model',
  agentId: 'agent',
  request: { messages: [...messages], tools: [TOOL], model: 'm' },
});

const messagesOf = (request: EffectRequest | undefined): unknown[] => (request?.kind === 'model' ? request.request.messages : []);
const toolsOf = (request: EffectRequest | undefined): unknown[] => (request?.kind === 'model' ? (request.request.tools ?? []) : []);

describe('a step context storing model calls', () => {
  it('copies and scrubs a message or tool once, however many later calls of the run carry it', () => {
    const step = stepContext();
    const first: Message = { role: 'user', content: `My key is ${SECRET}.` };
    const second: Message = { role: 'assistant', content: 'Noted.' };
    void step.effect('k1', modelCall([first]), undefined);
    void step.effect('k2', modelCall([first, second]), undefined);
    const [one, two] = [messagesOf(step.requested.get('k1')), messagesOf(step.requested.get('k2'))];
    expect(two[0]).toBe(one[0]);
    // A scrubbed JSON copy, as before: never the run's own message.
    expect(one[0]).not.toBe(first);
    expect(one[0]).toEqual({ role: 'user', content: 'My key is [REDACTED].' });
    expect(two[1]).toEqual(second);
    expect(toolsOf(step.requested.get('k2'))[0]).toBe(toolsOf(step.requested.get('k1'))[0]);
    expect(step.requested.get('k2')).toEqual({ kind: 'model', agentId: 'agent', request: { messages: two, tools: [{ ...TOOL, description: 'uses [REDACTED]' }], model: 'm' } });
  });

  it('scrubs a message already copied of a secret the agent learned since (a token obtained mid-run)', () => {
    const redactor = createRedactor({ secrets: [SECRET] }, {});
    const step = stepContext(redactor);
    const token = 'oauth-token-learned-at-run-time';
    const reply: Message = { role: 'tool', toolCallId: 'call_1', content: `signed in with ${token}` };
    void step.effect('k1', modelCall([reply]), undefined);
    expect(messagesOf(step.requested.get('k1'))[0]).toEqual({ role: 'tool', toolCallId: 'call_1', content: `signed in with ${token}` });
    redactor.addSecret(token);
    void step.effect('k2', modelCall([reply]), undefined);
    expect(messagesOf(step.requested.get('k2'))[0]).toEqual({ role: 'tool', toolCallId: 'call_1', content: 'signed in with [REDACTED]' });
  });
});
