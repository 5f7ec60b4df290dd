/**
 * The inspector's local relay: an HTTP + WebSocket server on 127.0.0.1 that broadcasts
 * inspection messages to every connected client (the Stately inspector page, or any WebSocket
 * client), replaying recent ones to late joiners.
 *
 * `@statelyai/inspect/server` has such a server, but it listens on every interface (the agent's
 * context would be readable from the LAN), has no way to learn a system-picked port, and its
 * `stop()` leaves client sockets open. This one binds loopback only, refuses WebSocket upgrades
 * from foreign web origins (any page in the user's browser could otherwise read the stream),
 * and closes everything on `stop()`.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocket, WebSocketServer } from 'ws';
import { InspectorStartError } from './errors.ts';

export interface RelayServerOptions {
  readonly port: number;
  /** The Stately inspector UI the bridge page embeds. */
  readonly inspectorUrl: string;
  /** Messages kept for late joiners, bounded in count and bytes. */
  readonly replayLimit: number;
  readonly replayBytes: number;
}

/** A running relay. */
export interface RelayServer {
  /** The bridge page to open in a browser. */
  readonly url: string;
  /** Where WebSocket clients connect. */
  readonly wsUrl: string;
  broadcast(message: string): void;
  stop(): Promise<void>;
}

// A client this far behind is skipped rather than buffered without bound.
const MAX_CLIENT_BACKLOG = 16 * 1024 * 1024;
const CLOSE_GRACE_MS = 250;

/**
 * Start the relay; resolves once it listens.
 *
 * @example
 * ```ts
 * const relay = await startRelayServer({ port: 0, inspectorUrl: 'https://stately.ai/inspect', replayLimit: 1000, replayBytes: 8 << 20 });
 * relay.broadcast(JSON.stringify({ type: '@xstate.event' }));
 * await relay.stop();
 * ```
 */
export async function startRelayServer(options: RelayServerOptions): Promise<RelayServer> {
  let port = options.port;
  const http = createServer((request, response) => {
    if (request.method !== 'GET' || (request.url ?? '/') !== '/') {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('Not found');
      return;
    }
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(bridgePage(port, options.inspectorUrl));
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
    http.once('error', (cause) => reject(new InspectorStartError(options.port, { cause })));
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

/** Non-browser clients send no Origin; browsers may connect only from our own bridge page. */
function originAllowed(origin: string | undefined, port: number): boolean {
  if (origin === undefined) return true;
  return origin === `http://127.0.0.1:${port}` || origin === `http://localhost:${port}`;
}

/** The page the browser opens: it embeds the Stately inspector and forwards the stream to it. */
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
