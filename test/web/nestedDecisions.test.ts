/**
 * Sub-agents' waits for a human deeper in the tree (a sub-agent's own sub-agent) and side by side
 * (two sub-agents waiting at once), answered through each protocol's own flow over real HTTP on
 * 127.0.0.1: the AI SDK's approval requests read by `readUIMessageStream`, AG-UI's interrupts by
 * `HttpAgent`, every event checked against AG-UI's schemas.
 */
import { describe, expect, it } from 'vitest';
import { HttpAgent } from '@ag-ui/client';
import { EventSchemas } from '@ag-ui/core/schemas';
import type { BaseEvent, ResumeEntry } from '@ag-ui/core';
import type { UIMessage } from 'ai';
import { z } from 'zod';
import { scriptedModel } from '../../src/testing/index.ts';
import { defineTool } from '../../src/tools/defineTool.ts';
import { createAgUiHandler } from '../../src/web/agUi.ts';
import { createAiSdkHandler } from '../../src/web/aiSdk.ts';
import { trackedSystem } from '../system/helpers.ts';
import { nestedDelegation, twoWaiting, waitMidText } from './fixtures/nested.ts';
import { answered, chatBody, chunksOf, EventReader, messageOf, partsOf, post, runInput, servedPerTest } from './support.ts';

const served = servedPerTest();

const userMessage: UIMessage = { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'What is 20 + 22?' }] };



const agentParts = (message: UIMessage) => partsOf(message).filter((part) => part.type === 'data-actorloop.agent').map((part) => part.data as { agentId: string; runId: string; parentRunId: string; status: string });
const textsOf = (message: UIMessage) => partsOf(message).filter((part) => part.type === 'text').map((part) => part.text);

type AgUiEvent = BaseEvent & Record<string, unknown>;

/** Runs `client` to its end, every event checked against AG-UI's schemas (HttpAgent checks their order). */
async function consume(client: HttpAgent, runId: string, resume?: ResumeEntry[]): Promise<AgUiEvent[]> {
  const events: AgUiEvent[] = [];
  await client.runAgent({ runId, ...(resume === undefined ? {} : { resume }) }, { onEvent: ({ event }) => void events.push(EventSchemas.parse(event) as AgUiEvent) });
  return events;
}

describe("a sub-agent's sub-agent waiting for a human (lead → coordinator → adder)", () => {
  it('AI SDK: the approval request names the adder’s run; the answer runs its call once and the coordinator, then the lead, answer', { timeout: 30_000 }, async () => {
    const { system } = trackedSystem();
    const { made } = nestedDelegation(system);
    const { url } = await served(createAiSdkHandler(system.get('lead').agent, { system }));

    const first = await messageOf(await post(url, chatBody([userMessage])));
    const agents = agentParts(first);
    const coordinator = agents.find((a) => a.agentId === 'coordinator');
    const adder = agents.find((a) => a.agentId === 'adder');
    expect(coordinator).toMatchObject({ parentRunId: first.id, status: 'running' });
    expect(adder).toMatchObject({ parentRunId: coordinator?.runId, status: 'waiting' });
    const sub = adder?.runId as string;
    const request = partsOf(first).find((part) => part.state === 'approval-requested');
    expect(request).toMatchObject({ type: 'tool-add', toolCallId: `${sub}/call_0_0`, approval: { id: `${sub}/call_0_0` }, toolMetadata: { agentId: 'adder', runId: sub } });
    expect(system.get('adder').agent.handle(sub)?.phase()).toBe('awaitingHuman');
    expect(made.adder).toBe(0);

    const answer = answered(first, `${sub}/call_0_0`, true);
    const done = await messageOf(await post(url, chatBody([userMessage, answer])), answer);
    expect(made.adder).toBe(1);
    expect(partsOf(done).find((part) => part.type === 'tool-add')).toMatchObject({ state: 'output-available', output: '42', toolMetadata: { runId: sub } });
    expect(partsOf(done).find((part) => part.type === 'tool-delegate_to_adder')).toMatchObject({ state: 'output-available', output: 'It is 42.', toolMetadata: { runId: coordinator?.runId } });
    expect(partsOf(done).find((part) => part.type === 'tool-delegate_to_coordinator')).toMatchObject({ state: 'output-available', output: 'The adder says 42.' });
    // Each text once, in the order the runs said them: nothing repeated, nothing lost.
    expect(textsOf(done)).toEqual(['Asking the coordinator.', 'Asking the adder.', 'Adding them.', 'It is 42.', 'The adder says 42.', 'The coordinator says 42.']);
    expect(agentParts(done).map((a) => [a.agentId, a.status])).toEqual([
      ['coordinator', 'finished'],
      ['adder', 'finished'],
    ]);
    expect(done.metadata).toMatchObject({ runId: first.id, reason: 'final_answer' });
  });

  it("AI SDK: a rejection's reason reaches the adder's model, and the tree still answers", { timeout: 30_000 }, async () => {
    const { system } = trackedSystem();
    const { made, adder } = nestedDelegation(system);
    const { url } = await served(createAiSdkHandler(system.get('lead').agent, { system }));
    const first = await messageOf(await post(url, chatBody([userMessage])));
    const sub = agentParts(first).find((a) => a.agentId === 'adder')?.runId as string;

    const answer = answered(first, `${sub}/call_0_0`, false, 'not with my numbers');
    const done = await messageOf(await post(url, chatBody([userMessage, answer])), answer);
    expect(made.adder).toBe(0);
    expect(adder.calls[1]?.messages.find((m) => m.role === 'tool')?.content).toContain('not with my numbers');
    expect(partsOf(done).find((part) => part.type === 'tool-add')).toMatchObject({ state: 'output-denied' });
    expect(textsOf(done).at(-1)).toBe('The coordinator says 42.');
  });

  it("AG-UI: the interrupt names the adder's run, whose parent chain leads to the coordinator; resuming runs the call once and the tree finishes", { timeout: 30_000 }, async () => {
    const { system } = trackedSystem();
    const { made } = nestedDelegation(system);
    const { url } = await served(createAgUiHandler(system.get('lead').agent, { system }));
    const client = new HttpAgent({ url, threadId: 'thread-n', initialMessages: [{ id: 'u1', role: 'user', content: 'What is 20 + 22?' }] });

    const first = await consume(client, 'run-n');
    const started = first.filter((e) => e.type === 'SUBAGENT_STARTED');
    const coordinator = started.find((e) => e.name === 'coordinator')?.subagentRunId as string;
    const sub = started.find((e) => e.name === 'adder')?.subagentRunId as string;
    expect(started.find((e) => e.name === 'adder')).toMatchObject({ parentSubagentRunId: coordinator });
    const interrupt = { id: `${sub}/call_0_0`, subagentRunId: sub, toolCallId: `${sub}/call_0_0`, reason: 'confirmation' };
    expect(first.at(-1)).toMatchObject({ type: 'RUN_FINISHED', runId: 'run-n', outcome: { type: 'interrupt', interrupts: [interrupt] } });
    // The adder is suspended with its interrupt; the coordinator, still at work, is closed with it.
    expect(first.filter((e) => e.type === 'SUBAGENT_FINISHED').map((e) => [e.subagentRunId, e.outcome])).toEqual([
      [sub, { type: 'suspended', interruptIds: [interrupt.id] }],
      [coordinator, { type: 'suspended' }],
    ]);
    expect(made.adder).toBe(0);

    const second = await consume(client, 'run-n-2', [{ interruptId: interrupt.id, status: 'resolved', payload: { approved: true } }]);
    expect(made.adder).toBe(1);
    expect(second[0]).toEqual({ type: 'RUN_STARTED', threadId: 'thread-n', runId: 'run-n-2' });
    expect(second.filter((e) => e.type === 'TOOL_CALL_RESULT').map((e) => [e.content, e.subagentRunId])).toEqual([
      ['42', sub],
      ['It is 42.', coordinator],
      ['The adder says 42.', undefined],
    ]);
    // Nothing the first run carried comes again, nothing is lost.
    expect(second.filter((e) => e.type === 'TEXT_MESSAGE_CONTENT').map((e) => e.delta).join('')).toBe('It is 42.The adder says 42.The coordinator says 42.');
    // Each run's part is opened again (parents first) and finished once.
    expect(second.filter((e) => e.type === 'SUBAGENT_STARTED').map((e) => e.subagentRunId)).toEqual([coordinator, sub]);
    expect(second.filter((e) => e.type === 'SUBAGENT_FINISHED').map((e) => [e.subagentRunId, (e.outcome as { type: string }).type])).toEqual([
      [sub, 'success'],
      [coordinator, 'success'],
    ]);
    expect(second.at(-1)).toMatchObject({ type: 'RUN_FINISHED', runId: 'run-n-2', outcome: { type: 'success' }, result: { text: 'The coordinator says 42.' } });
    expect(client.pendingInterrupts).toEqual([]);
  });

  it("AG-UI: a rejection's reason reaches the adder's model", { timeout: 30_000 }, async () => {
    const { system } = trackedSystem();
    const { made, adder } = nestedDelegation(system);
    const { url } = await served(createAgUiHandler(system.get('lead').agent, { system }));
    const client = new HttpAgent({ url, threadId: 'thread-r', initialMessages: [{ id: 'u1', role: 'user', content: 'What is 20 + 22?' }] });
    await consume(client, 'run-r');
    const [interrupt] = client.pendingInterrupts;

    const second = await consume(client, 'run-r-2', [{ interruptId: interrupt?.id as string, status: 'resolved', payload: { approved: false, reason: 'not with my numbers' } }]);
    expect(made.adder).toBe(0);
    expect(adder.calls[1]?.messages.find((m) => m.role === 'tool')?.content).toContain('not with my numbers');
    expect(second.at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'success' }, result: { text: 'The coordinator says 42.' } });
  });
});

describe('two sub-agents waiting for a human at once (lead → left, right)', () => {
  const bothWaiting = async (system: ReturnType<typeof trackedSystem>['system']) => {
    const waits = (agentId: string) => system.get(agentId).agent.journal.entries().some((entry) => entry.event.type === 'human.awaiting');
    await expect.poll(() => waits('left') && waits('right')).toBe(true);
  };

  it('AI SDK: each wait is asked for in turn; answering one ends the response at the other, still waiting; the next answer, carrying the first again, runs every call once', { timeout: 30_000 }, async () => {
    const { system } = trackedSystem();
    // The left call, once approved, runs only when the test says: the page answers the right one before its output reaches it.
    const { made, releaseRight, releaseLeft } = twoWaiting(system, true);
    const { url } = await served(createAiSdkHandler(system.get('lead').agent, { system }));

    const first = await messageOf(await post(url, chatBody([userMessage])));
    const runOf = (message: UIMessage, agentId: string) => agentParts(message).find((a) => a.agentId === agentId)?.runId as string;
    const left = runOf(first, 'left');
    expect(partsOf(first).filter((part) => part.state === 'approval-requested').map((part) => part.toolCallId)).toEqual([`${left}/call_0_0`]);
    // The right one comes to wait too before the page answers the left one.
    releaseRight();
    await bothWaiting(system);

    const leftAnswer = answered(first, `${left}/call_0_0`, true);
    const second = await messageOf(await post(url, chatBody([userMessage, leftAnswer])), leftAnswer);
    const right = runOf(second, 'right');
    expect(made).toEqual({ left: 0, right: 0 });
    expect(system.get('right').agent.handle(right)?.phase()).toBe('awaitingHuman');
    // The response ends at the right one's wait, which the page is asked to answer.
    expect(partsOf(second).filter((part) => part.state === 'approval-requested').map((part) => part.toolCallId)).toEqual([`${right}/call_0_0`]);
    expect(agentParts(second).find((a) => a.agentId === 'right')?.status).toBe('waiting');
    expect(second.metadata).toBeUndefined();

    // The left run ends while the page decides; its answered part, still awaiting its output in the page's message, goes back with the next answer.
    releaseLeft();
    await expect.poll(() => system.get('left').agent.journal.entries(left).some((entry) => entry.event.type === 'run.terminated')).toBe(true);
    expect(partsOf(second).find((part) => part.toolCallId === `${left}/call_0_0`)?.state).toBe('approval-responded');
    const rightAnswer = answered(second, `${right}/call_0_0`, true);
    const done = await messageOf(await post(url, chatBody([userMessage, rightAnswer])), rightAnswer);
    expect(made).toEqual({ left: 1, right: 1 });
    expect(partsOf(done).find((part) => part.toolCallId === `${left}/call_0_0`)).toMatchObject({ state: 'output-available', output: '3' });
    expect(partsOf(done).find((part) => part.toolCallId === `${right}/call_0_0`)).toMatchObject({ state: 'output-available', output: '7' });
    const texts = textsOf(done);
    for (const text of ['Asking both.', 'Left adds.', 'Left: 3.', 'Right adds.', 'Right: 7.', 'Both answered.']) expect(texts.filter((t) => t === text)).toHaveLength(1);
    expect(texts.at(-1)).toBe('Both answered.');
    expect(done.metadata).toMatchObject({ reason: 'final_answer' });
  });

  it('AI SDK: with both waiting before the page reads, the page answers them one after the other and every call runs once', { timeout: 30_000 }, async () => {
    const { system } = trackedSystem();
    const { made, releaseRight } = twoWaiting(system);
    const { url } = await served(createAiSdkHandler(system.get('lead').agent, { system }));
    releaseRight();
    const response = await post(url, chatBody([userMessage]));
    await bothWaiting(system);

    let message = await messageOf(response);
    const asked: string[] = [];
    for (let round = 0; round < 3 && message.metadata === undefined; round++) {
      const requests = partsOf(message).filter((part) => part.state === 'approval-requested');
      expect(requests.length).toBeGreaterThan(0);
      let answer = message;
      for (const request of requests) {
        const id = (request.approval as { id: string }).id;
        asked.push(id);
        answer = answered(answer, id, true);
      }
      message = await messageOf(await post(url, chatBody([userMessage, answer])), answer);
    }
    expect(asked).toHaveLength(2);
    expect(new Set(asked.map((id) => id.split('/')[0])).size).toBe(2);
    expect(made).toEqual({ left: 1, right: 1 });
    // A run's text still streaming when another's wait ended a response is split there, never repeated or lost.
    const textOf = (agentId: string) =>
      partsOf(message)
        .filter((part) => part.type === 'text' && (part.providerMetadata as { actorloop?: { agentId: string } } | undefined)?.actorloop?.agentId === agentId)
        .map((part) => part.text)
        .join('');
    expect([textOf('left'), textOf('right')]).toEqual(['Left adds.Left: 3.', 'Right adds.Right: 7.']);
    expect(textsOf(message).at(-1)).toBe('Both answered.');
    expect(message.metadata).toMatchObject({ reason: 'final_answer' });
  });

  it("AI SDK: a sibling's text still streaming at a wait is ended in that response and goes on as a new part in the next, nothing repeated or lost", { timeout: 30_000 }, async () => {
    const { system } = trackedSystem();
    const { made, startLeft, right } = waitMidText(system);
    const { url } = await served(createAiSdkHandler(system.get('lead').agent, { system }));
    const deltas = (agentId: string) => system.get(agentId).agent.journal.entries().filter((entry) => entry.event.type === 'token.delta').length;

    const response = await post(url, chatBody([userMessage]));
    right.release(1);
    await expect.poll(() => deltas('right')).toBe(1);
    startLeft();
    const first = await messageOf(response);
    const rightText = (message: UIMessage) => partsOf(message).filter((part) => part.type === 'text' && (part.providerMetadata as { actorloop?: { agentId: string } } | undefined)?.actorloop?.agentId === 'right');
    // The right one's text, cut by the left one's wait, is a finished part of this response.
    expect(rightText(first).map((part) => [part.text, part.state])).toEqual([['Right ', 'done']]);
    const leftRun = agentParts(first).find((a) => a.agentId === 'left')?.runId as string;

    right.release(100);
    const leftAnswer = answered(first, `${leftRun}/call_0_0`, true);
    const second = await messageOf(await post(url, chatBody([userMessage, leftAnswer])), leftAnswer);
    const rightRun = agentParts(second).find((a) => a.agentId === 'right')?.runId as string;
    const rightAnswer = answered(second, `${rightRun}/call_0_0`, true);
    const done = await messageOf(await post(url, chatBody([userMessage, rightAnswer])), rightAnswer);

    expect(made).toEqual({ left: 1, right: 1 });
    expect(rightText(done).map((part) => part.text)).toEqual(['Right ', 'adds.', 'Right: 7.']);
    expect(partsOf(done).filter((part) => part.type === 'text').every((part) => part.state === 'done')).toBe(true);
    expect(textsOf(done).at(-1)).toBe('Both answered.');
  });

  it('AG-UI: each interrupt is its own AG-UI run’s end; resuming one ends at the other, still waiting; every call runs once', { timeout: 30_000 }, async () => {
    const { system } = trackedSystem();
    const { made, releaseRight } = twoWaiting(system);
    const { url } = await served(createAgUiHandler(system.get('lead').agent, { system }));
    const client = new HttpAgent({ url, threadId: 'thread-2', initialMessages: [{ id: 'u1', role: 'user', content: 'Ask both.' }] });

    const first = await consume(client, 'run-2');
    const subOf = (events: AgUiEvent[], name: string) => events.find((e) => e.type === 'SUBAGENT_STARTED' && e.name === name)?.subagentRunId as string;
    const left = subOf(first, 'left');
    expect(client.pendingInterrupts.map((i) => i.subagentRunId)).toEqual([left]);
    releaseRight();
    await bothWaiting(system);

    const second = await consume(client, 'run-2b', [{ interruptId: `${left}/call_0_0`, status: 'resolved', payload: { approved: true } }]);
    const right = subOf(first, 'right');
    await expect.poll(() => ({ ...made })).toEqual({ left: 1, right: 0 });
    expect(second.at(-1)).toMatchObject({ type: 'RUN_FINISHED', runId: 'run-2b', outcome: { type: 'interrupt', interrupts: [{ id: `${right}/call_0_0`, subagentRunId: right }] } });
    expect(system.get('right').agent.handle(right)?.phase()).toBe('awaitingHuman');

    const third = await consume(client, 'run-2c', [{ interruptId: `${right}/call_0_0`, status: 'resolved', payload: { approved: true } }]);
    expect(made).toEqual({ left: 1, right: 1 });
    const all = [...first, ...second, ...third];
    expect(all.filter((e) => e.type === 'TOOL_CALL_RESULT').map((e) => e.content)).toEqual(expect.arrayContaining(['3', '7', 'Left: 3.', 'Right: 7.']));
    expect(all.filter((e) => e.type === 'TOOL_CALL_RESULT')).toHaveLength(4);
    // Each sub-run finishes once, whichever AG-UI run it finishes in (the left one may still be at work when the right one's wait ends the second).
    for (const sub of [left, right]) expect(all.filter((e) => e.type === 'SUBAGENT_FINISHED' && e.subagentRunId === sub && (e.outcome as { type: string }).type === 'success')).toHaveLength(1);
    expect(third.at(-1)).toMatchObject({ type: 'RUN_FINISHED', runId: 'run-2c', outcome: { type: 'success' }, result: { text: 'Both answered.' } });
    expect(client.pendingInterrupts).toEqual([]);
  });
});

describe('an answer the page sent before, still in its message', () => {
  it('AI SDK: a run waiting on two calls, answered one at a time: the second answer, carrying the first again, decides only the second', { timeout: 30_000 }, async () => {
    const { system } = trackedSystem();
    const made = { runs: 0 };
    const add = defineTool({ name: 'add', description: 'Add', input: z.object({ a: z.number(), b: z.number() }), execute: ({ a, b }) => (made.runs++, a + b), requiresConfirmation: true });
    const calls = [
      { name: 'add', arguments: { a: 1, b: 2 } },
      { name: 'add', arguments: { a: 3, b: 4 } },
    ];
    system.spawn('solo', { model: { provider: scriptedModel([{ toolCalls: calls }, { text: '3 and 7.' }]), stream: true }, tools: [add] });
    const { url } = await served(createAiSdkHandler(system.get('solo').agent, { system }));

    const first = await messageOf(await post(url, chatBody([userMessage])));
    expect(partsOf(first).filter((part) => part.state === 'approval-requested').map((part) => part.toolCallId)).toEqual(['call_0_0', 'call_0_1']);
    const one = answered(first, 'call_0_0', true);
    const second = await messageOf(await post(url, chatBody([userMessage, one])), one);
    // The run asks again for the call still waiting; the first stays answered in the page's message.
    expect(partsOf(second).filter((part) => part.type === 'tool-add').map((part) => part.state)).toEqual(['approval-responded', 'approval-requested']);
    expect(made.runs).toBe(0);

    const both = answered(second, 'call_0_1', false, 'not that one');
    const done = await messageOf(await post(url, chatBody([userMessage, both])), both);
    expect(made.runs).toBe(1);
    expect(partsOf(done).filter((part) => part.type === 'tool-add').map((part) => part.state)).toEqual(['output-available', 'output-denied']);
    expect(done.metadata).toMatchObject({ reason: 'final_answer' });
  });
});

describe("a page reloaded while a sub-run's wait is unanswered", () => {
  /** The chunks of a response read to its end; a response still open after 10 s fails the test rather than hang it. */
  async function chunksTo(response: Response): Promise<{ type: string }[]> {
    const chunks: { type: string }[] = [];
    const reader = chunksOf(response.body as ReadableStream<Uint8Array>).getReader();
    for (let next = await reader.read(); next.done !== true; next = await reader.read()) chunks.push(next.value);
    return chunks;
  }

  it('AI SDK (resumeStream): gets the pending approval request again, and answering it afterwards runs the call once', { timeout: 30_000 }, async () => {
    const { system } = trackedSystem();
    const { made } = nestedDelegation(system);
    const { url } = await served(createAiSdkHandler(system.get('lead').agent, { system }));
    const first = await messageOf(await post(url, chatBody([userMessage])));
    const sub = agentParts(first).find((a) => a.agentId === 'adder')?.runId as string;

    const reloaded = await fetch(`${url}/chat-1/stream`, { signal: AbortSignal.timeout(10_000) });
    expect(reloaded.status).toBe(200);
    const chunks = await chunksTo(reloaded);
    expect(chunks.filter((chunk) => chunk.type === 'tool-approval-request')).toEqual([expect.objectContaining({ approvalId: `${sub}/call_0_0`, toolCallId: `${sub}/call_0_0` })]);
    expect(chunks.at(-1)).toEqual({ type: 'finish', finishReason: 'tool-calls' });
    // What the reloaded page builds is what the first response built.
    const again = await messageOf(new Response(chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`).join('')));
    expect(textsOf(again)).toEqual(textsOf(first));
    expect(made.adder).toBe(0);

    const answer = answered(again, `${sub}/call_0_0`, true);
    const done = await messageOf(await post(url, chatBody([userMessage, answer])), answer);
    expect(made.adder).toBe(1);
    expect(textsOf(done).at(-1)).toBe('The coordinator says 42.');
  });

  it('AI SDK (resumeStream): after one of two waits was answered, gets the current response again (from the answer on), ending at the other wait', { timeout: 30_000 }, async () => {
    const { system } = trackedSystem();
    const { made, releaseRight } = twoWaiting(system);
    const { url } = await served(createAiSdkHandler(system.get('lead').agent, { system }));
    const first = await messageOf(await post(url, chatBody([userMessage])));
    const left = agentParts(first).find((a) => a.agentId === 'left')?.runId as string;
    releaseRight();
    const leftAnswer = answered(first, `${left}/call_0_0`, true);
    const secondResponse = await post(url, chatBody([userMessage, leftAnswer]));
    const secondChunks = await chunksTo(secondResponse);
    const right = system.get('right').agent.journal.entries()[0]?.runId as string;
    expect(secondChunks.filter((chunk) => chunk.type === 'tool-approval-request').map((chunk) => (chunk as { approvalId?: string }).approvalId)).toEqual([`${right}/call_0_0`]);

    const reloaded = await chunksTo(await fetch(`${url}/chat-1/stream`, { signal: AbortSignal.timeout(10_000) }));
    // The response the page was in, again (with what the runs did since): not the first one's, and ending at the right one's request.
    const deltas = reloaded.filter((chunk) => chunk.type === 'text-delta').map((chunk) => (chunk as { delta?: string }).delta);
    expect(deltas).not.toContain('Asking both.');
    expect(deltas.join('')).toContain('Right adds.');
    expect(reloaded.filter((chunk) => chunk.type === 'tool-approval-request').map((chunk) => (chunk as { approvalId?: string }).approvalId)).toEqual([`${right}/call_0_0`]);
    expect(reloaded.at(-1)).toEqual({ type: 'finish', finishReason: 'tool-calls' });
    await expect.poll(() => ({ ...made })).toEqual({ left: 1, right: 0 });

    // The reloaded page had the first response's message; the resumed stream goes on from it, and the answer finishes the chat.
    const page = await messageOf(new Response(reloaded.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`).join('')), leftAnswer);
    const rightAnswer = answered(page, `${right}/call_0_0`, true);
    const done = await messageOf(await post(url, chatBody([userMessage, rightAnswer])), rightAnswer);
    expect(made).toEqual({ left: 1, right: 1 });
    for (const text of ['Asking both.', 'Left adds.', 'Left: 3.', 'Right adds.', 'Right: 7.', 'Both answered.']) expect(textsOf(done).filter((t) => t === text)).toHaveLength(1);
  });

  it('AG-UI (GET runs/<served run>/stream with the interrupt’s Last-Event-ID): gets the pending interrupt again, and resuming it afterwards works', { timeout: 30_000 }, async () => {
    const { system } = trackedSystem();
    const { made } = nestedDelegation(system);
    const { url } = await served(createAgUiHandler(system.get('lead').agent, { system }));
    const first = await new EventReader(await post(url, runInput('What is 20 + 22?', 'run-g'))).rest();
    const end = first.at(-1);
    expect(end?.data).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'interrupt' } });
    const interrupts = (end?.data.outcome as { interrupts: { id: string }[] }).interrupts;

    const reloaded = await new EventReader(await fetch(`${url}/runs/run-g/stream`, { headers: { 'last-event-id': end?.id as string }, signal: AbortSignal.timeout(10_000) })).rest();
    expect(reloaded.map((e) => e.data.type)).toEqual(['RUN_STARTED', 'RUN_FINISHED']);
    expect(reloaded.at(-1)?.data).toMatchObject({ type: 'RUN_FINISHED', runId: 'run-g', outcome: { type: 'interrupt', interrupts } });
    expect(made.adder).toBe(0);

    const client = new HttpAgent({ url, threadId: 'thread-1', initialMessages: [{ id: 'u1', role: 'user', content: 'What is 20 + 22?' }] });
    const rest = await consume(client, 'run-g-2', [{ interruptId: interrupts[0]?.id as string, status: 'resolved', payload: { approved: true } }]);
    expect(made.adder).toBe(1);
    expect(rest.filter((e) => e.type === 'TEXT_MESSAGE_CONTENT').map((e) => e.delta).join('')).toBe('It is 42.The adder says 42.The coordinator says 42.');
    expect(rest.at(-1)).toMatchObject({ type: 'RUN_FINISHED', runId: 'run-g-2', outcome: { type: 'success' } });
  });
});
