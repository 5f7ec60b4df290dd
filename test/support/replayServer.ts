/**
 * A server on 127.0.0.1 that answers chat-completions requests with recorded responses of real
 * providers (test/fixtures/wire): `.json` bodies with the HTTP status their sidecar names, `.sse`
 * streams as recorded. Each request takes the next queued fixture; a `rule` sees every request
 * first and may answer with another fixture instead, the way the provider enforces its rules.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';

const WIRE = fileURLToPath(new URL('../fixtures/wire/', import.meta.url));

/** A chat-completions request body as the server received it. */
export type RequestBody = Record<string, unknown> & { readonly messages: readonly Record<string, unknown>[] };

/** What a rule answers instead of the queued fixture: a fixture name (its sidecar gives the status). */
export type Rule = (body: RequestBody) => string | undefined;

export interface ReplayServer {
  readonly baseURL: string;
  /** Every request body, in order. */
  readonly requests: RequestBody[];
  /** Fixtures answered so far, in order (rule answers included). */
  readonly served: string[];
  enqueue(...fixtures: string[]): void;
  close(): Promise<void>;
}

/** The recorded body of a fixture, as text. */
export function fixtureText(name: string): string {
  return readFileSync(WIRE + name, 'utf8');
}

/** The sidecar of a fixture: where it came from, and the HTTP status it was sent with. */
export function fixtureSource(name: string): { readonly status?: number; readonly url?: string | string[]; readonly repository?: string; readonly path?: string } {
  return JSON.parse(readFileSync(WIRE + sidecarOf(name), 'utf8')) as { status?: number };
}

/** `x.json` → `x.source.json`, `x-stream.sse` → `x-stream.source.json`. */
export function sidecarOf(name: string): string {
  return name.replace(/\.(json|sse)$/, '.source.json');
}

export async function startReplayServer(options: { readonly rule?: Rule } = {}): Promise<ReplayServer> {
  const queue: string[] = [];
  const requests: RequestBody[] = [];
  const served: string[] = [];

  const answer = (name: string, res: ServerResponse): void => {
    served.push(name);
    const text = fixtureText(name);
    if (name.endsWith('.sse')) {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.end(text);
      return;
    }
    const status = fixtureSource(name).status ?? 200;
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  };

  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => {
      let body: RequestBody;
      try {
        body = JSON.parse(Buffer.concat(parts).toString('utf8')) as RequestBody;
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end('{"error":{"message":"replay server: the request body is not JSON"}}');
        return;
      }
      requests.push(body);
      const ruled = options.rule?.(body);
      if (ruled !== undefined) return answer(ruled, res);
      const next = queue.shift();
      if (next === undefined) {
        // Not a provider error shape on purpose: a test that runs out of fixtures must fail loudly.
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(`replay server: no fixture queued for request ${requests.length}`);
        return;
      }
      answer(next, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    served,
    enqueue: (...fixtures) => void queue.push(...fixtures),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * DeepSeek's documented rule for thinking mode with tools: every assistant message that carries
 * tool calls must come back with its `reasoning_content`, else the API answers 400 with its error.
 */
export const deepSeekThinkingRule: Rule = (body) => {
  for (const message of body.messages) {
    const calls = message['tool_calls'];
    if (message['role'] !== 'assistant' || !Array.isArray(calls) || calls.length === 0) continue;
    const reasoning = message['reasoning_content'];
    if (typeof reasoning !== 'string' || reasoning === '') return 'deepseek-reasoning-content-missing.json';
  }
  return undefined;
};
