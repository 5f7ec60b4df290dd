/**
 * The runs the web rows time: an agent whose scripted model streams a checkable reply, the readers
 * (`tokens$`, and a plain `fetch` reader of a handler's SSE stream), and the servers of each way.
 */
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAgent, type Agent } from '../src/index.ts';
import { scriptedModel } from '../src/testing/index.ts';
import { createAgUiHandler, createAiSdkHandler, toNodeListener, type WebHandler } from '../src/web/index.ts';

/** The reply the model streams for a task: `tokens` pieces that name the task, so a mixed-up stream shows. */
export const piecesFor = (task: string, tokens: number) => Array.from({ length: tokens }, (_, i) => `${task}.${i} `);

export function streamingAgent(tokens: number): Agent {
  const model = scriptedModel((request) => {
    const task = request.messages.findLast((m) => m.role === 'user')?.content;
    if (typeof task !== 'string') throw new Error('web bench: the request has no user task');
    const chunks = piecesFor(task, tokens);
    return { text: chunks.join(''), chunks };
  });
  return createAgent({ model: { provider: model, stream: true } });
}

/** The reply as `tokens$` carries it; resolves when the run has ended. */
export async function readDirect(agent: Agent, task: string, runId: string): Promise<{ text: string; deltas: number }> {
  const pieces: string[] = [];
  // Subscribed before the run starts, so no token can come before the reader.
  const subscription = agent.tokens$.subscribe((token) => {
    if (token.runId === runId) pieces.push(token.delta);
  });
  try {
    await agent.start(task, { runId }).result;
  } finally {
    subscription.unsubscribe();
  }
  return { text: pieces.join(''), deltas: pieces.length };
}

export type Protocol = 'agUi' | 'aiSdk';

export const bodyFor = (protocol: Protocol, task: string, id: string) =>
  protocol === 'agUi'
    ? { threadId: `t-${id}`, runId: id, messages: [{ id: 'u1', role: 'user', content: task }], tools: [], context: [], state: {}, forwardedProps: {} }
    : { id, messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: task }] }] };

/**
 * POST a run and read its SSE stream to the end with a plain reader: the text deltas joined, and
 * whether the run finished. `send` is `fetch`, or the handler itself to leave HTTP out.
 */
export async function readStream(send: (request: Request) => Promise<Response>, url: string, protocol: Protocol, task: string, id: string): Promise<{ text: string; deltas: number; finished: boolean }> {
  const request = new Request(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(bodyFor(protocol, task, id)) });
  const response = await send(request);
  if (!response.ok || response.body === null) throw new Error(`web bench: ${protocol} answered ${response.status} ${await response.text()}`);
  const [deltaType, endType] = protocol === 'agUi' ? ['TEXT_MESSAGE_CONTENT', 'RUN_FINISHED'] : ['text-delta', 'finish'];
  const decoder = new TextDecoder();
  const pieces: string[] = [];
  let finished = false;
  let buffered = '';
  const take = (block: string) => {
    for (const line of block.split('\n')) {
      if (!line.startsWith('data: ') || line === 'data: [DONE]') continue;
      const event = JSON.parse(line.slice(6)) as { type: string; delta?: string };
      if (event.type === deltaType) pieces.push(event.delta ?? '');
      else if (event.type === endType) finished = true;
    }
  };
  for await (const chunk of response.body) {
    buffered += decoder.decode(chunk, { stream: true });
    const cut = buffered.lastIndexOf('\n\n');
    if (cut < 0) continue;
    take(buffered.slice(0, cut));
    buffered = buffered.slice(cut + 2);
  }
  take(buffered + decoder.decode());
  return { text: pieces.join(''), deltas: pieces.length, finished };
}

/**
 * Fail loudly when a run's reassembled text is not exactly what the model streamed. `tokens$`
 * carries every delta; a stream may join deltas that waited for its reader, never split one.
 */
export function check(what: string, task: string, tokens: number, got: { text: string; deltas: number; finished?: boolean }, joined: boolean): void {
  const expected = piecesFor(task, tokens);
  const deltasOk = joined ? got.deltas >= 1 && got.deltas <= tokens : got.deltas === tokens;
  if (got.finished === false || !deltasOk || got.text !== expected.join('')) {
    throw new Error(`web bench: ${what} for "${task}" got ${got.deltas} deltas for ${tokens} tokens${got.finished === false ? ', no end event' : ''}, text ${got.text === expected.join('') ? 'exact' : 'wrong'}`);
  }
}

export async function listen(server: Server): Promise<string> {
  // A backlog above Node's default 511 so a thousand connections at once are not refused and retried.
  await new Promise<void>((resolve) => server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/agent`;
}

export function close(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

/**
 * What a user writes without the handler: the run's `tokens$` as AG-UI SSE events on a Node response,
 * each token written as it comes, no ids, no reconnect, no joining for a slow reader.
 */
export function byHandListener(agent: Agent): RequestListener {
  return (request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      const input = JSON.parse(body) as { threadId: string; runId: string; messages: { content: string }[] };
      const { threadId, runId } = input;
      const messageId = `${runId}:text`;
      const send = (event: object) => response.write(`data: ${JSON.stringify(event)}\n\n`);
      response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      send({ type: 'RUN_STARTED', threadId, runId });
      send({ type: 'TEXT_MESSAGE_START', messageId, role: 'assistant' });
      const subscription = agent.tokens$.subscribe((token) => {
        if (token.runId === runId) send({ type: 'TEXT_MESSAGE_CONTENT', messageId, delta: token.delta });
      });
      agent.start(input.messages.at(-1)?.content ?? '', { runId }).result.then(
        () => {
          subscription.unsubscribe();
          send({ type: 'TEXT_MESSAGE_END', messageId });
          send({ type: 'RUN_FINISHED', threadId, runId });
          response.end();
        },
        (error: unknown) => {
          subscription.unsubscribe();
          send({ type: 'RUN_ERROR', message: String(error) });
          response.end();
        },
      );
    });
  };
}

/** The ways' servers on 127.0.0.1 for one agent, and the AG-UI handler itself for the in-process way. */
export async function startServers(agent: Agent): Promise<{ agUiHandler: WebHandler; urls: Record<'agUi' | 'aiSdk' | 'transport' | 'byHand', string>; close(): Promise<void> }> {
  const agUiHandler = createAgUiHandler(agent);
  const agUi = createServer(toNodeListener(agUiHandler));
  const aiSdk = createServer(toNodeListener(createAiSdkHandler(agent)));
  const recorded = await (await agUiHandler(new Request('http://127.0.0.1/api/agent', { method: 'POST', body: JSON.stringify(bodyFor('agUi', TRANSPORT_TASK, 'recorded')) }))).text();
  const transport = createServer((request, response) => {
    request.resume();
    request.on('end', () => response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' }).end(recorded));
  });
  const byHand = createServer(byHandListener(agent));
  const servers = [agUi, aiSdk, transport, byHand];
  try {
    const urls = { agUi: await listen(agUi), aiSdk: await listen(aiSdk), transport: await listen(transport), byHand: await listen(byHand) };
    return { agUiHandler, urls, close: async () => void (await Promise.all(servers.map(close))) };
  } catch (error) {
    await Promise.all(servers.filter((server) => server.listening).map(close));
    throw error;
  }
}

/**
 * The task of a way's run in a round. The recorded stream answers one task, whatever the request asks;
 * the others name the way by its index: a task's length is its tokens' length, and every way must carry the same bytes.
 */
export const taskFor = (transport: boolean, round: number, wayIndex: number): string => (transport ? TRANSPORT_TASK : `r${String(round).padStart(3, '0')}w${wayIndex}`);

/** As long as the other ways' tasks. */
const TRANSPORT_TASK = 'rtrans';
