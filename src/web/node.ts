import type { IncomingMessage, ServerResponse } from 'node:http';
import { describeError } from '../core/errors.ts';
import { WebRequestError } from './errors.ts';
import { MAX_BODY_BYTES, type WebHandler } from './handler.ts';

export interface NodeListenerOptions {
  /** The largest request body taken, in bytes; a larger one is refused with 413 before more of it is held. Default 4 MiB, the handlers' own. */
  readonly maxBodyBytes?: number;
}

/**
 * @example
 * ```ts
 * createServer(toNodeListener(createAgUiHandler(agent))).listen(3000);
 * ```
 */
export function toNodeListener(handler: WebHandler, options: NodeListenerOptions = {}): (request: IncomingMessage, response: ServerResponse) => void {
  const maxBodyBytes = options.maxBodyBytes ?? MAX_BODY_BYTES;
  return (request, response) => {
    const aborted = new AbortController();
    // The response closes before it finished: the client went away.
    response.on('close', () => {
      if (!response.writableFinished) aborted.abort();
    });
    void toRequest(request, aborted.signal, maxBodyBytes)
      .then((webRequest) => serve(handler, webRequest, response))
      .catch((error: unknown) => {
        const refused = error instanceof WebRequestError;
        // A body refused part-way is not read on: the connection closes after the answer.
        if (!response.headersSent) response.writeHead(refused ? error.status : 500, { 'content-type': 'application/json', ...(refused && error.status === 413 ? { connection: 'close' } : {}) });
        response.end(JSON.stringify({ error: { code: refused ? error.code : 'internal', message: describeError(error) } }));
      });
  };
}

function drained(response: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      response.off('drain', done);
      response.off('close', done);
      resolve();
    };
    response.on('drain', done);
    response.on('close', done);
  });
}

/** One buffer, not a web stream: the handler reads a body whole anyway, and it is a small JSON document; one past `maxBytes` is refused as it comes. */
function bodyOf(request: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const tooLarge = () => new WebRequestError(413, `The request body is larger than ${maxBytes} bytes: send less, or raise maxBodyBytes (of toNodeListener and of the handler).`);
  if (Number(request.headers['content-length'] ?? 0) > maxBytes) return Promise.reject(tooLarge());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const take = (chunk: Buffer): void => {
      size += chunk.length;
      if (size <= maxBytes) return void chunks.push(chunk);
      request.off('data', take);
      chunks.length = 0;
      reject(tooLarge());
    };
    request.on('data', take);
    request.on('end', () => resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)));
    request.on('error', reject);
    request.on('close', () => {
      if (!request.complete) reject(new WebRequestError(400, 'The client closed the connection before it sent the whole request body: send it again.'));
    });
  });
}

async function toRequest(request: IncomingMessage, signal: AbortSignal, maxBodyBytes: number): Promise<Request> {
  const url = new URL(request.url ?? '/', `http://${request.headers.host ?? 'localhost'}`);
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else if (value !== undefined) headers.set(name, value);
  }
  const method = request.method ?? 'GET';
  const hasBody = method !== 'GET' && method !== 'HEAD';
  return new Request(url, { method, headers, signal, ...(hasBody ? { body: await bodyOf(request, maxBodyBytes) } : {}) });
}

async function serve(handler: WebHandler, request: Request, response: ServerResponse): Promise<void> {
  const answer = await handler(request);
  const headers: Record<string, string> = {};
  answer.headers.forEach((value, name) => (headers[name] = value));
  response.writeHead(answer.status, headers);
  if (answer.body === null) return void response.end();
  // The headers go out in one write with the first events when these come within two turns (a run's do: the body
  // waits one for the rest of its turn); else alone, so a page whose stream has nothing yet knows it is open.
  let wrote = false;
  setImmediate(() =>
    setImmediate(() => {
      if (!wrote && !response.writableEnded && !response.destroyed) response.flushHeaders();
    }),
  );
  const reader = answer.body.getReader();
  response.on('close', () => void reader.cancel().catch(() => undefined));
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    wrote = true;
    // A client slower than the stream: read on once the socket took what it was given, so
    // what waits stays in the body (joined there) instead of piling up in Node's buffer.
    if (!response.write(value)) await drained(response);
  }
  response.end();
}
