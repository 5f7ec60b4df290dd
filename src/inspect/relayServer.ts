// Not `@statelyai/inspect/server`: it listens on every interface (the context would be readable from the LAN)
// and its stop() leaves sockets open. This binds loopback only and refuses foreign web origins.
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocket, WebSocketServer } from 'ws';
import { InspectorError } from './errors.ts';
import { livePage } from './livePage.ts';
import { listDiagrams, readDiagram } from './vizFiles.ts';

export interface RelayServerOptions {
  readonly port: number;
  readonly inspectorUrl: string;
  readonly replayLimit: number;
  readonly replayBytes: number;
  readonly page?: 'stately' | 'local';
  readonly vizDir?: string;
}

export interface RelayServer {
  readonly url: string;
  readonly wsUrl: string;
  broadcast(message: string): void;
  stop(): Promise<void>;
}

// A client this far behind is skipped rather than buffered without bound.
const MAX_CLIENT_BACKLOG = 16 * 1024 * 1024;
const CLOSE_GRACE_MS = 250;

export async function startRelayServer(options: RelayServerOptions): Promise<RelayServer> {
  let port = options.port;
  const local = options.page === 'local';
  const http = createServer((request, response) => {
    const path = request.url ?? '/';
    if (request.method === 'GET' && path === '/' && !local) {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(bridgePage(port, options.inspectorUrl));
      return;
    }
    if (request.method === 'GET' && local) {
      serveLocal(path, port, options.vizDir).then(
        (found) => {
          if (found === undefined) notFound(response);
          else response.writeHead(200, found.headers).end(found.body);
        },
        () => notFound(response),
      );
      return;
    }
    notFound(response);
  });
  const wss = new WebSocketServer({
    server: http,
    // Clients only listen; anything they send is ignored, so keep frames tiny.
    maxPayload: 64 * 1024,
    verifyClient: ({ req }: { req: IncomingMessage }) => originAllowed(req.headers.origin, port),
  });
  const replay: string[] = [];
  let replayBytes = 0;
  wss.on('connection', (socket) => {
    socket.on('error', () => undefined);
    for (const message of replay) socket.send(message);
  });
  wss.on('error', () => undefined);

  await new Promise<void>((resolve, reject) => {
    http.once('error', (cause) => reject(InspectorError.start(options.port, { cause })));
    http.listen(options.port, '127.0.0.1', () => resolve());
  });
  port = (http.address() as AddressInfo).port;
  http.on('error', () => undefined);

  let stopping: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}/`,
    wsUrl: `ws://127.0.0.1:${port}`,
    broadcast(message) {
      if (stopping !== undefined) return;
      replay.push(message);
      replayBytes += message.length;
      while (replay.length > options.replayLimit || (replayBytes > options.replayBytes && replay.length > 1)) {
        replayBytes -= (replay.shift() as string).length;
      }
      for (const client of wss.clients) {
        if (client.readyState === WebSocket.OPEN && client.bufferedAmount < MAX_CLIENT_BACKLOG) client.send(message);
      }
    },
    stop() {
      stopping ??= closeAll();
      return stopping;
    },
  };

  async function closeAll(): Promise<void> {
    const clients = [...wss.clients];
    await Promise.all(
      clients.map(
        (client) =>
          new Promise<void>((resolve) => {
            if (client.readyState === WebSocket.CLOSED) return resolve();
            const timer = setTimeout(() => client.terminate(), CLOSE_GRACE_MS);
            client.once('close', () => {
              clearTimeout(timer);
              resolve();
            });
            client.close(1001, 'inspector stopped');
          }),
      ),
    );
    await new Promise<void>((resolve) => wss.close(() => resolve()));
    await new Promise<void>((resolve) => {
      http.close(() => resolve());
      http.closeAllConnections();
    });
  }
}

function notFound(response: ServerResponse): void {
  response.writeHead(404, { 'content-type': 'text/plain' }).end('Not found');
}

interface Found {
  readonly headers: Record<string, string>;
  readonly body: string;
}

async function serveLocal(path: string, port: number, vizDir: string | undefined): Promise<Found | undefined> {
  if (path === '/') {
    // A fresh nonce per response: only the page's own inline script may run, and the policy
    // confines every fetch and socket to this relay, so the page cannot reach the network.
    const nonce = randomBytes(16).toString('base64');
    const csp = [
      "default-src 'none'",
      `script-src 'nonce-${nonce}'`,
      "style-src 'unsafe-inline'",
      `connect-src 'self' ws://127.0.0.1:${port} ws://localhost:${port}`,
      "img-src 'self' data:",
      "base-uri 'none'",
      "form-action 'none'",
      "frame-ancestors 'none'",
    ].join('; ');
    const body = livePage({ nonce, diagrams: await listDiagrams(vizDir) });
    return { headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', 'content-security-policy': csp }, body };
  }
  const svg = await readDiagram(vizDir, path);
  if (svg === undefined) return undefined;
  return { headers: { 'content-type': 'image/svg+xml', 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff' }, body: svg };
}

/** Non-browser clients send no Origin; browsers may connect only from our own bridge page. */
function originAllowed(origin: string | undefined, port: number): boolean {
  if (origin === undefined) return true;
  return origin === `http://127.0.0.1:${port}` || origin === `http://localhost:${port}`;
}

function bridgePage(port: number, inspectorUrl: string): string {
  const src = JSON.stringify(inspectorUrl).replace(/</g, '\\u003c');
  return `<!DOCTYPE html>
<html>
<head>
  <meta charset="utf-8">
  <title>actorloop inspector</title>
  <style>* { margin: 0; padding: 0; } html, body { height: 100%; } iframe { width: 100%; height: 100%; border: none; }</style>
</head>
<body>
  <iframe id="inspector"></iframe>
  <script>
    const iframe = document.getElementById('inspector');
    iframe.src = ${src};
    const buffer = [];
    let connected = false;
    // The inspector announces itself once loaded; until then, keep what arrives.
    window.addEventListener('message', (e) => {
      if (e.data && e.data.type === '@statelyai.connected') {
        connected = true;
        for (const event of buffer) iframe.contentWindow.postMessage(event, '*');
        buffer.length = 0;
      }
    });
    const ws = new WebSocket('ws://' + location.host);
    ws.onmessage = (event) => {
      const data = JSON.parse(event.data);
      if (connected) iframe.contentWindow.postMessage(data, '*');
      else buffer.push(data);
    };
  </script>
</body>
</html>`;
}
