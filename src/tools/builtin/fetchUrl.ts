import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import { WebFetchError, type UrlRefusalReason } from './errors.ts';
import { guardedLookup, type ResolveHost } from './guardedLookup.ts';
import type { HostPolicy } from './hostPolicy.ts';

export interface FetchUrlOptions {
  readonly policy: HostPolicy;
  readonly resolveHost: ResolveHost;
  /** The rest is not read: the connection is closed. */
  readonly maxBytes: number;
  readonly timeoutMs: number;
  readonly maxRedirects: number;
  readonly signal?: AbortSignal;
}

export interface FetchUrlResult {
  readonly url: string;
  readonly status: number;
  readonly statusText: string;
  readonly contentType: string | undefined;
  readonly body: Buffer;
  readonly truncated: boolean;
  /** Size of the whole body when known (Content-Length or read to the end), else bytes seen. */
  readonly totalBytes: number;
  /** False when the body was cut and the server did not declare its length. */
  readonly totalExact: boolean;
  readonly redirects: readonly string[];
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

const HEADERS = {
  accept: 'text/html,text/plain,text/markdown,application/json;q=0.9,*/*;q=0.5',
  // Compressed bodies would make maxBytes a limit on the wire, not on what we decode.
  'accept-encoding': 'identity',
  'user-agent': 'actorloop-web_fetch',
};

function networkError(url: string, error: unknown): Error {
  if (error instanceof WebFetchError) return error;
  const code = typeof error === 'object' && error !== null && 'code' in error ? String((error as { code: unknown }).code) : undefined;
  const message = error instanceof Error ? error.message : String(error);
  return new WebFetchError('web_fetch_failed', { url, reason: 'network', detail: `${code === undefined ? '' : `${code}: `}${message}` }, { cause: error });
}

function send(url: URL, options: FetchUrlOptions, signal: AbortSignal): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const client = url.protocol === 'https:' ? https : http;
    const request = client.request(url, {
      method: 'GET',
      headers: HEADERS,
      // A fresh agent: no pooled socket from an earlier hop, and lookup runs for this one.
      agent: false,
      lookup: guardedLookup(options.policy, url.href, options.resolveHost),
    });
    const onAbort = () => request.destroy(signal.reason instanceof Error ? signal.reason : new Error(String(signal.reason)));
    signal.addEventListener('abort', onAbort, { once: true });
    request.on('socket', (socket) => {
      // Last line of defence: whatever path led here, the peer must be an allowed address.
      socket.once('connect', () => {
        const address = socket.remoteAddress;
        if (address === undefined || !options.policy.allows(url.hostname, address)) {
          request.destroy(new WebFetchError('url_refused', { url: url.href, reason: 'private_address', detail: `the connection went to ${String(address)}, which is not allowed` }));
        }
      });
    });
    request.once('response', (response) => {
      signal.removeEventListener('abort', onAbort);
      resolve(response);
    });
    // `on`, not `once`: a late second error on a request with no listener would crash the host.
    request.on('error', (error) => {
      signal.removeEventListener('abort', onAbort);
      reject(signal.aborted ? signal.reason : networkError(url.href, error));
    });
    request.end();
  });
}

interface CappedBody {
  readonly body: Buffer;
  readonly received: number;
  readonly truncated: boolean;
}

function readCapped(response: IncomingMessage, url: string, maxBytes: number, signal: AbortSignal): Promise<CappedBody> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let kept = 0;
    let received = 0;
    let settled = false;
    const settle = (outcome: { readonly truncated: boolean } | { readonly error: unknown }) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      if ('error' in outcome) reject(outcome.error);
      else resolve({ body: Buffer.concat(chunks, kept), received, truncated: outcome.truncated });
    };
    const onAbort = () => {
      settle({ error: signal.reason });
      response.destroy();
    };
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    response.on('data', (chunk: Buffer) => {
      received += chunk.length;
      const room = maxBytes - kept;
      if (chunk.length <= room) {
        chunks.push(chunk);
        kept += chunk.length;
        return;
      }
      if (room > 0) chunks.push(chunk.subarray(0, room));
      kept = maxBytes;
      settle({ truncated: true });
      // Stop downloading: the rest of a huge body never enters memory.
      response.destroy();
    });
    response.once('end', () => settle({ truncated: false }));
    response.on('error', (error) => settle({ error: networkError(url, error) }));
    response.once('close', () => settle({ error: networkError(url, new Error('the connection closed before the body was complete')) }));
  });
}

/** Redirects are followed by hand so each hop goes through the same checks; 4xx/5xx are returned, not thrown. */
export async function fetchUrl(raw: string, options: FetchUrlOptions): Promise<FetchUrlResult> {
  const parent = options.signal;
  if (parent?.aborted === true) throw parent.reason;
  const deadline = new AbortController();
  const timer = setTimeout(() => {
    const detail = `no complete answer within ${options.timeoutMs} ms; the server is slow or not answering — try later or another source`;
    deadline.abort(new WebFetchError('web_fetch_failed', { url: raw, reason: 'timeout', detail }));
  }, options.timeoutMs);
  const onParentAbort = () => deadline.abort(parent?.reason);
  parent?.addEventListener('abort', onParentAbort, { once: true });
  try {
    const redirects: string[] = [];
    let current = raw;
    for (;;) {
      const hop = redirects.length;
      let url: URL;
      let response: IncomingMessage;
      try {
        url = options.policy.checkUrl(current);
        response = await send(url, options, deadline.signal);
      } catch (error) {
        throw error instanceof WebFetchError && error.code === 'url_refused' && hop > 0 && error.hop === 0
          ? new WebFetchError('url_refused', { url: error.url, reason: error.reason as UrlRefusalReason, detail: error.detail, hop }, { cause: error.cause })
          : error;
      }
      const status = response.statusCode ?? 0;
      const location = response.headers.location;
      if (REDIRECTS.has(status) && location !== undefined) {
        response.destroy();
        if (redirects.length >= options.maxRedirects) {
          throw new WebFetchError('url_refused', { url: raw, reason: 'too_many_redirects', detail: `more than ${options.maxRedirects} redirects; fetch the final URL directly` });
        }
        let next: string;
        try {
          next = new URL(location, url).href;
        } catch {
          throw new WebFetchError('url_refused', { url: url.href, reason: 'invalid_url', detail: 'it redirected to a malformed Location' });
        }
        redirects.push(next);
        current = next;
        continue;
      }
      const { body, received, truncated } = await readCapped(response, url.href, options.maxBytes, deadline.signal);
      const declared = Number(response.headers['content-length']);
      const totalExact = !truncated || Number.isSafeInteger(declared);
      return {
        url: url.href,
        status,
        statusText: response.statusMessage ?? '',
        contentType: response.headers['content-type'],
        body,
        truncated,
        totalBytes: truncated && Number.isSafeInteger(declared) ? Math.max(declared, received) : received,
        totalExact,
        redirects,
      };
    }
  } finally {
    clearTimeout(timer);
    parent?.removeEventListener('abort', onParentAbort);
  }
}
