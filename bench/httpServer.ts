/**
 * A stateless OpenAI-compatible chat-completions server for the loopback-HTTP rows, run in a
 * process of its own (so its cost is not the contenders'). `POST /<contender>/v1/chat/completions`
 * with model `react-N` answers the react-N script's next step from the last tool message of the
 * request; `GET /counts` returns how many completions each contender asked for. Prints its port.
 */
import { createServer } from 'node:http';
import { nextStep, TOOL_NAME } from './scenarios/react.ts';

interface ChatRequest {
  readonly model?: unknown;
  readonly stream?: unknown;
  readonly messages?: readonly { readonly role?: unknown; readonly content?: unknown }[];
}

const counts: Record<string, number> = {};

function reply(body: ChatRequest): object {
  const n = /^react-(\d+)$/.exec(String(body.model))?.[1];
  if (n === undefined) throw new Error(`model should be react-<N>, got ${JSON.stringify(body.model)}`);
  if (body.stream === true) throw new Error('this server answers non-streaming requests only');
  const last = body.messages?.at(-1);
  const content = last?.role === 'tool' ? (typeof last.content === 'string' ? last.content : JSON.stringify(last.content)) : undefined;
  const step = nextStep(content, Number(n));
  const message =
    'call' in step
      ? { role: 'assistant', content: null, tool_calls: [{ id: `c${step.call}`, type: 'function', function: { name: TOOL_NAME, arguments: JSON.stringify({ i: step.call }) } }] }
      : { role: 'assistant', content: step.answer };
  return {
    id: 'chatcmpl-bench',
    object: 'chat.completion',
    created: 0,
    model: body.model,
    choices: [{ index: 0, message, finish_reason: 'call' in step ? 'tool_calls' : 'stop', logprobs: null }],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  };
}

const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const send = (status: number, payload: unknown) => {
      const text = JSON.stringify(payload);
      response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      response.end(text);
    };
    if (request.method === 'GET' && request.url === '/counts') return send(200, counts);
    const contender = /^\/([\w-]+)\/v1\/chat\/completions$/.exec(request.url ?? '')?.[1];
    if (request.method !== 'POST' || contender === undefined) return send(404, { error: { message: `no route ${request.method} ${request.url}` } });
    try {
      const payload = reply(JSON.parse(Buffer.concat(chunks).toString('utf8')) as ChatRequest);
      counts[contender] = (counts[contender] ?? 0) + 1;
      send(200, payload);
    } catch (error) {
      send(400, { error: { message: error instanceof Error ? error.message : String(error), type: 'invalid_request_error' } });
    }
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the bench server has no TCP address');
  process.stdout.write(`${address.port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
