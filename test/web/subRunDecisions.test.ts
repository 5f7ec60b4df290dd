/**
 * A sub-agent's wait for a human, answered through each protocol's own flow over real HTTP on
 * 127.0.0.1: the AI SDK's approval request answered in the next chat request, as `useChat` sends
 * it after `addToolApprovalResponse`, and AG-UI's interrupt answered by resume entries through
 * HttpAgent. The decision reaches the sub-run, the served run's tree streams on from where the
 * page stopped, and a page cannot answer a run outside the tree it streams.
 */
import { describe, expect, it } from 'vitest';
import { HttpAgent } from '@ag-ui/client';
import { EventSchemas } from '@ag-ui/core/schemas';
import type { BaseEvent, ResumeEntry } from '@ag-ui/core';
import { lastAssistantMessageIsCompleteWithApprovalResponses, readUIMessageStream, type UIMessage } from 'ai';
import { z } from 'zod';
import { scriptedModel } from '../../src/testing/index.ts';
import { defineTool } from '../../src/tools/defineTool.ts';
import { createAgUiHandler } from '../../src/web/agUi.ts';
import { createAiSdkHandler } from '../../src/web/aiSdk.ts';
import type { AgentSystem } from '../../src/system/types.ts';
import { trackedSystem } from '../system/helpers.ts';
import { delegation, parallelDelegation } from './fixtures/delegation.ts';
import { answered, chatBody, chunksOf, EventReader, messageOf, partsOf, post, runInput, servedPerTest } from './support.ts';

const served = servedPerTest();

/** The lead delegates to a researcher whose `add` waits for a human; `runs` counts the calls made. */
function waitingResearcher(system: AgentSystem) {
  const made = { runs: 0 };
  const add = defineTool({
    name: 'add',
    description: 'Add two numbers',
    input: z.object({ a: z.number(), b: z.number() }),
    execute: ({ a, b }) => (made.runs++, a + b),
    requiresConfirmation: true,
  });
  return { made, ...delegation(system, [add], 'add') };
}

/** A run of the same system outside the served run's tree, waiting on its own `add`. */
async function strangerWaiting(system: AgentSystem): Promise<string> {
  const add = defineTool({ name: 'add', description: 'Add', input: z.object({ a: z.number(), b: z.number() }), execute: ({ a, b }) => a + b, requiresConfirmation: true });
  system.spawn('stranger', { model: scriptedModel([{ toolCalls: [{ name: 'add', arguments: { a: 1, b: 1 } }] }, { text: '2' }]), tools: [add] });
  const run = system.get('stranger').agent.start('Add 1 and 1', { runId: 'run-stranger' });
  await expect.poll(() => run.phase()).toBe('awaitingHuman');
  return run.runId;
}

/** Two sub-agents at once (see `parallelDelegation`), the researcher's `add` waiting for a human. */
function parallelHelper(system: AgentSystem) {
  const add = defineTool({ name: 'add', description: 'Add', input: z.object({ a: z.number(), b: z.number() }), execute: ({ a, b }) => a + b, requiresConfirmation: true });
  const { release } = parallelDelegation(system, add);
  /** Lets the helper finish while the researcher still waits. */
  const finishHelper = async (helperRun: string) => {
    release();
    await expect.poll(() => system.get('helper').agent.journal.entries(helperRun).some((entry) => entry.event.type === 'run.terminated')).toBe(true);
  };
  return { finishHelper };
}


describe("a sub-agent's approval request in the AI SDK stream", () => {
  const userMessage: UIMessage = { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'What is 20 + 22?' }] };



  /** Starts the chat and reads its first response, which ends at the researcher's wait. */
  async function waitingChat(url: string) {
    const message = await messageOf(await post(url, chatBody([userMessage])));
    const request = partsOf(message).find((part) => part.type === 'tool-add');
    const sub = (request?.toolMetadata as { runId: string } | undefined)?.runId as string;
    return { message, request, sub };
  }

  it('shows the waiting call as an approval request; the answer in the next request runs it once and the served run answers', { timeout: 30_000 }, async () => {
    const { system } = trackedSystem();
    const { made } = waitingResearcher(system);
    const { url } = await served(createAiSdkHandler(system.get('lead').agent, { system }));

    const { message, request, sub } = await waitingChat(url);
    expect(request).toMatchObject({ state: 'approval-requested', toolCallId: `${sub}/call_0_0`, approval: { id: `${sub}/call_0_0` }, toolMetadata: { agentId: 'researcher', runId: sub } });
    expect(system.get('researcher').agent.handle(sub)?.phase()).toBe('awaitingHuman');
    expect(partsOf(message).find((part) => part.type === 'data-actorloop.agent')?.data).toMatchObject({ runId: sub, status: 'waiting' });
    // The page's own check for sending the answer on its own passes once the request is answered.
    const answer = answered(message, `${sub}/call_0_0`, true);
    expect(lastAssistantMessageIsCompleteWithApprovalResponses({ messages: [userMessage, message] })).toBe(false);
    expect(lastAssistantMessageIsCompleteWithApprovalResponses({ messages: [userMessage, answer] })).toBe(true);

    const done = await messageOf(await post(url, chatBody([userMessage, answer])), answer);
    expect(made.runs).toBe(1);
    expect(partsOf(done).find((part) => part.type === 'tool-add')).toMatchObject({ state: 'output-available', output: '42' });
    expect(partsOf(done).find((part) => part.type === 'tool-delegate_to_researcher')).toMatchObject({ state: 'output-available', output: 'It is 42.' });
    // Each text once: the second response went on from where the first stopped.
    const texts = partsOf(done).filter((part) => part.type === 'text').map((part) => part.text);
    expect(texts).toEqual(['Asking the researcher.', 'Adding them.', 'It is 42.', 'The researcher says 42.']);
    expect(done.metadata).toMatchObject({ runId: message.id, reason: 'final_answer' });
  });

  it('serves a reloaded page (resumeStream) the response going on after the answer, not the answered request again', { timeout: 30_000 }, async () => {
    const { system } = trackedSystem();
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const add = defineTool({ name: 'add', description: 'Add', input: z.object({ a: z.number(), b: z.number() }), execute: async ({ a, b }) => (await released, a + b), requiresConfirmation: true });
    delegation(system, [add], 'add');
    const { url } = await served(createAiSdkHandler(system.get('lead').agent, { system }));
    const { message, sub } = await waitingChat(url);
    const answer = answered(message, `${sub}/call_0_0`, true);
    // The answer's response is left unread: the page reloads while the approved call runs.
    const going = await post(url, chatBody([userMessage, answer]));
    await expect.poll(() => system.get('researcher').agent.journal.entries(sub).some((entry) => entry.event.type === 'tool.started')).toBe(true);
    await going.body?.cancel();

    const resumed = await fetch(`${url}/chat-1/stream`);
    expect(resumed.status).toBe(200);
    release();
    const chunks: { type: string }[] = [];
    const reader = chunksOf(resumed.body as ReadableStream<Uint8Array>).getReader();
    for (let next = await reader.read(); next.done !== true; next = await reader.read()) chunks.push(next.value);
    expect(chunks.filter((chunk) => chunk.type === 'tool-approval-request')).toEqual([]);
    expect(chunks.filter((chunk) => chunk.type === 'text-delta').map((chunk) => (chunk as { delta?: string }).delta).join('')).toBe('It is 42.The researcher says 42.');
    expect(chunks.at(-1)).toMatchObject({ type: 'finish', finishReason: 'stop' });
  });

  it("takes a rejection to the sub-agent's model with its reason; the served run still answers", { timeout: 30_000 }, async () => {
    const { system } = trackedSystem();
    const { made, researcher } = waitingResearcher(system);
    const { url } = await served(createAiSdkHandler(system.get('lead').agent, { system }));

    const { message, sub } = await waitingChat(url);
    const answer = answered(message, `${sub}/call_0_0`, false, 'not with my numbers');
    const done = await messageOf(await post(url, chatBody([userMessage, answer])), answer);

    expect(made.runs).toBe(0);
    expect(researcher.calls[1]?.messages.find((m) => m.role === 'tool')?.content).toContain('not with my numbers');
    expect(partsOf(done).find((part) => part.type === 'tool-add')).toMatchObject({ state: 'output-denied' });
    expect(partsOf(done).filter((part) => part.type === 'text').at(-1)?.text).toBe('The researcher says 42.');
  });

  it('refuses an answer for a call of a run outside the chat’s tree, and leaves every run waiting', { timeout: 30_000 }, async () => {
    const { system } = trackedSystem();
    const { made } = waitingResearcher(system);
    const stranger = await strangerWaiting(system);
    const { url } = await served(createAiSdkHandler(system.get('lead').agent, { system }));
    const { message, sub } = await waitingChat(url);

    // The stranger's call, claimed by a part of this chat's message.
    const forged = answered(message, `${sub}/call_0_0`, true);
    const claim = (runId: string) => ({ ...forged, parts: partsOf(forged).map((part) => (part.type === 'tool-add' ? { ...part, toolCallId: `${runId}/call_0_0`, toolMetadata: { agentId: 'x', runId } } : part)) }) as UIMessage;
    for (const runId of [stranger, 'run-nowhere']) {
      const refused = await post(url, chatBody([userMessage, claim(runId)]));
      expect(refused.status).toBe(404);
      expect(((await refused.json()) as { error: { message: string } }).error.message).toContain(`Run ${runId} is not one the run this page streams (${message.id}) delegated to`);
    }
    expect(system.get('stranger').agent.handle(stranger)?.phase()).toBe('awaitingHuman');
    expect(system.get('researcher').agent.handle(sub)?.phase()).toBe('awaitingHuman');
    expect(made.runs).toBe(0);

    // The chat's own answer still goes through.
    const done = await messageOf(await post(url, chatBody([userMessage, forged])), forged);
    expect(partsOf(done).filter((part) => part.type === 'text').at(-1)?.text).toBe('The researcher says 42.');
  });
});

describe('a sub-run that goes on while the page decides another', () => {
  it('reaches the page in the answer’s response (AI SDK): the response goes on from where the last one stopped, not from where the runs are now', { timeout: 30_000 }, async () => {
    const { system } = trackedSystem();
    const { finishHelper } = parallelHelper(system);
    const { url } = await served(createAiSdkHandler(system.get('lead').agent, { system }));
    const userMessage: UIMessage = { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'Ask both.' }] };
    const chat = (messages: UIMessage[]) => post(url, { id: 'chat-par', messages, trigger: 'submit-message' });
    const read = async (response: Response, message?: UIMessage) => {
      let last: UIMessage | undefined;
      for await (const built of readUIMessageStream({ stream: chunksOf(response.body as ReadableStream<Uint8Array>), terminateOnError: true, ...(message === undefined ? {} : { message: structuredClone(message) }) })) last = built;
      return structuredClone(last as UIMessage);
    };
    const first = await read(await chat([userMessage]));
    const agents = partsOf(first).filter((part) => part.type === 'data-actorloop.agent').map((part) => part.data as { agentId: string; runId: string });
    const request = partsOf(first).find((part) => part.state === 'approval-requested');
    expect(request?.type).toBe('tool-add');
    // The helper's text after the wait is not in this response.
    expect(partsOf(first).some((part) => part.text === 'Helped.')).toBe(false);
    await finishHelper(agents.find((a) => a.agentId === 'helper')?.runId as string);

    const id = (request?.approval as { id: string }).id;
    const answer = { ...first, parts: partsOf(first).map((part) => (part === request ? { ...part, state: 'approval-responded', approval: { id, approved: true } } : part)) } as UIMessage;
    const done = await read(await chat([userMessage, answer]), answer);
    const texts = partsOf(done).filter((part) => part.type === 'text').map((part) => part.text);
    expect(texts.filter((text) => text === 'Helped.')).toHaveLength(1);
    expect(texts.filter((text) => text === 'Asking both.')).toHaveLength(1);
    expect(texts.at(-1)).toBe('Both answered.');
    expect(partsOf(done).find((part) => part.type === 'tool-hold')).toMatchObject({ state: 'output-available', output: 'held' });
  });

  it('reaches the page in the resumed AG-UI run, whose parts open at the interrupt are closed there and opened again', { timeout: 30_000 }, async () => {
    const { system } = trackedSystem();
    const { finishHelper } = parallelHelper(system);
    const { url } = await served(createAgUiHandler(system.get('lead').agent, { system }));
    const client = new HttpAgent({ url, threadId: 'thread-par', initialMessages: [{ id: 'u1', role: 'user', content: 'Ask both.' }] });
    const events: (BaseEvent & Record<string, unknown>)[] = [];
    const run = (runId: string, resume?: ResumeEntry[]) => client.runAgent({ runId, ...(resume === undefined ? {} : { resume }) }, { onEvent: ({ event }) => void events.push(EventSchemas.parse(event) as BaseEvent & Record<string, unknown>) });

    await run('run-par');
    const helperRun = events.find((e) => e.type === 'SUBAGENT_STARTED' && e.name === 'helper')?.subagentRunId as string;
    // The helper was working when the researcher's wait ended the run: it is suspended with it.
    expect(events.filter((e) => e.type === 'SUBAGENT_FINISHED').map((e) => [e.subagentRunId, (e.outcome as { type: string }).type])).toContainEqual([helperRun, 'suspended']);
    const [interrupt] = client.pendingInterrupts;
    const cut = events.length;
    await finishHelper(helperRun);

    await run('run-par-2', [{ interruptId: interrupt?.id as string, status: 'resolved', payload: { approved: true } }]);
    const second = events.slice(cut);
    const helperText = second.filter((e) => e.type === 'TEXT_MESSAGE_CONTENT' && e.subagentRunId === helperRun).map((e) => e.delta);
    expect(helperText.join('')).toBe('Helped.');
    expect(second.filter((e) => e.type === 'SUBAGENT_STARTED').map((e) => e.subagentRunId)).toContain(helperRun);
    expect(second.at(-1)).toMatchObject({ type: 'RUN_FINISHED', runId: 'run-par-2', outcome: { type: 'success' }, result: { text: 'Both answered.' } });
  });
});

describe("a sub-agent's interrupt answered by AG-UI resume entries", () => {
  /** Runs `client` to its end, every event checked against AG-UI's schemas (HttpAgent checks their order). */
  async function consume(client: HttpAgent, runId: string, resume?: ResumeEntry[]): Promise<(BaseEvent & Record<string, unknown>)[]> {
    const events: (BaseEvent & Record<string, unknown>)[] = [];
    await client.runAgent({ runId, ...(resume === undefined ? {} : { resume }) }, { onEvent: ({ event }) => void events.push(EventSchemas.parse(event) as BaseEvent & Record<string, unknown>) });
    return events;
  }

  it("ends the AG-UI run with the sub-run's interrupt; resuming it runs the call and the served run finishes", { timeout: 30_000 }, async () => {
    const { system } = trackedSystem();
    const { made } = waitingResearcher(system);
    const { url } = await served(createAgUiHandler(system.get('lead').agent, { system }));
    const client = new HttpAgent({ url, threadId: 'thread-1', initialMessages: [{ id: 'u1', role: 'user', content: 'What is 20 + 22?' }] });

    const first = await consume(client, 'run-lead');
    const sub = first.find((e) => e.type === 'SUBAGENT_STARTED')?.subagentRunId as string;
    const interrupt = { id: `${sub}/call_0_0`, subagentRunId: sub, toolCallId: `${sub}/call_0_0`, reason: 'confirmation' };
    expect(first.at(-1)).toMatchObject({ type: 'RUN_FINISHED', runId: 'run-lead', outcome: { type: 'interrupt', interrupts: [interrupt] } });
    expect(first.find((e) => e.type === 'SUBAGENT_FINISHED')).toMatchObject({ subagentRunId: sub, outcome: { type: 'suspended', interruptIds: [interrupt.id] } });
    expect(client.pendingInterrupts).toEqual([expect.objectContaining(interrupt)]);

    const second = await consume(client, 'run-lead-2', [{ interruptId: interrupt.id, status: 'resolved', payload: { approved: true } }]);
    expect(made.runs).toBe(1);
    expect(second[0]).toEqual({ type: 'RUN_STARTED', threadId: 'thread-1', runId: 'run-lead-2' });
    expect(second.filter((e) => e.type === 'TOOL_CALL_RESULT').map((e) => [e.content, e.subagentRunId])).toEqual([
      ['42', sub],
      ['It is 42.', undefined],
    ]);
    // Nothing the first run carried comes again.
    expect(second.filter((e) => e.type === 'TEXT_MESSAGE_CONTENT').map((e) => e.delta).join('')).toBe('It is 42.The researcher says 42.');
    expect(second.at(-1)).toMatchObject({ type: 'RUN_FINISHED', runId: 'run-lead-2', outcome: { type: 'success' }, result: { text: 'The researcher says 42.' } });
    expect(client.pendingInterrupts).toEqual([]);
    expect(client.messages.at(-1)).toMatchObject({ role: 'assistant', content: 'The researcher says 42.' });
  });

  it('refuses entries (and approvals) for a run outside the tree (404) and for a call that is not waiting (409), and the runs still wait', { timeout: 30_000 }, async () => {
    const { system } = trackedSystem();
    const { made } = waitingResearcher(system);
    const stranger = await strangerWaiting(system);
    const { url } = await served(createAgUiHandler(system.get('lead').agent, { system }));
    const first = await new EventReader(await post(url, runInput('What is 20 + 22?', 'run-lead'))).rest();
    const sub = first.find((e) => e.data.type === 'SUBAGENT_STARTED')?.data.subagentRunId as string;
    const resume = (interruptId: string) => post(url, { ...runInput('What is 20 + 22?', 'run-lead-2'), resume: [{ interruptId, status: 'resolved', payload: { approved: true } }] });
    const refusal = async (response: Response) => [response.status, ((await response.json()) as { error: { message: string } }).error.message];

    expect(await refusal(await resume(`${stranger}/call_0_0`))).toEqual([404, expect.stringContaining(`Run ${stranger} is not one the run this page streams (run-lead) delegated to`)]);
    expect(await refusal(await resume('run-nowhere/call_0_0'))).toEqual([404, expect.stringContaining('No run run-nowhere is known here')]);
    expect(await refusal(await resume(`${sub}/call_9_9`))).toEqual([409, expect.stringContaining(`Tool calls call_9_9 of run ${sub} are not waiting`)]);
    // Nor through the explicit routes: a run this handler never streamed is not the page's to decide.
    expect(await refusal(await post(`${url}/runs/${stranger}/approve`, {}))).toEqual([404, expect.stringContaining(`Run ${stranger} is not one a run this handler serves delegated to`)]);
    expect(system.get('stranger').agent.handle(stranger)?.phase()).toBe('awaitingHuman');
    expect(system.get('researcher').agent.handle(sub)?.phase()).toBe('awaitingHuman');
    expect(made.runs).toBe(0);

    const rest = await new EventReader(await resume(`${sub}/call_0_0`)).rest();
    expect(rest.at(-1)?.data).toMatchObject({ type: 'RUN_FINISHED', runId: 'run-lead-2', result: { text: 'The researcher says 42.' } });
  });
});
