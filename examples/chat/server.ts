/**
 * `npm run example:chat`: the demo agent in a web page. One server on 127.0.0.1 serves the chat
 * page at `/` and the agent over AG-UI at `/api/agent` (`createAgUiHandler`); the agent's
 * `divide` calls wait for the page's approve or reject. Offline the demo's scripted model
 * answers (streamed); with OPENAI_API_KEY / OPENAI_BASE_URL set, a real model does.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { createDemoAgent, DEMO_TASK } from '../../src/cli/demoAgent.ts';
import type { Agent } from '../../src/agent/types.ts';
import { createAgUiHandler, toNodeListener } from '../../src/web/index.ts';
import { CHAT_API, chatPage } from './page.ts';

export interface ChatServerOptions {
  /** Port on 127.0.0.1; 0 lets the system pick one. Default 3210. */
  readonly port?: number;
  /** Where the demo agent reads its model settings. Default `process.env`. */
  readonly env?: NodeJS.ProcessEnv;
}

export interface ChatServer {
  readonly url: string;
  /** Whether a real model answers (else the scripted one). */
  readonly real: boolean;
  readonly agent: Agent;
  close(): Promise<void>;
}

/**
 * Start the chat example; resolves once it listens.
 *
 * @example
 * ```ts
 * const chat = await startChatServer({ port: 0 });
 * console.log(chat.url);
 * await chat.close();
 * ```
 */
export async function startChatServer(options: ChatServerOptions = {}): Promise<ChatServer> {
  const env = options.env ?? process.env;
  const { agent, real } = createDemoAgent({ confirm: ['divide'], stream: true, env });
  const api = toNodeListener(createAgUiHandler(agent));
  const server: Server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://127.0.0.1').pathname;
    if (path === CHAT_API || path.startsWith(`${CHAT_API}/`)) return api(request, response);
    if (request.method === 'GET' && path === '/') {
      // The page may run its own inline script and talk to this server, nothing else.
      const nonce = randomBytes(16).toString('base64');
      const csp = `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'unsafe-inline'; connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'`;
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', 'content-security-policy': csp });
      response.end(chatPage(nonce, DEMO_TASK));
      return;
    }
    response.writeHead(404, { 'content-type': 'text/plain' }).end('Not found: the chat page is at /.');
  });
  const port = options.port ?? 3210;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${bound}/`,
    real,
    agent,
    close: () =>
      new Promise<void>((resolve) => {
        agent.stop();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function main(): Promise<void> {
  const port = process.env.PORT === undefined ? 3210 : Number(process.env.PORT);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    console.error(`PORT=${process.env.PORT} is not a port: give a number from 0 to 65535 (0 picks a free one).`);
    process.exitCode = 1;
    return;
  }
  let chat: ChatServer;
  try {
    chat = await startChatServer({ port });
  } catch (error) {
    const inUse = (error as NodeJS.ErrnoException).code === 'EADDRINUSE';
    console.error(inUse ? `Port ${port} is taken: run with PORT=<another port> (or PORT=0 for a free one).` : `The chat server did not start: ${String(error)}`);
    process.exitCode = 1;
    return;
  }
  console.log(`actorloop chat (${chat.real ? 'real model' : 'scripted offline model'}): ${chat.url}`);
  console.log('Calls to divide wait for Approve or Reject on the page. Ctrl+C stops.');
  const stop = (): void => void chat.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) void main();
