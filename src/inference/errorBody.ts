/**
 * Error bodies the `openai` client cannot read. It takes the message from `body.error`; vLLM
 * before 0.10.1 (and FastChat, LM Studio proxies) send the error object flat —
 * `{ "object": "error", "message": "…", "code": 400 }` — and the client reports only
 * "400 status code (no body)", losing e.g. the context-length message. Nesting such bodies
 * under `error` before the client reads them keeps the server's own words.
 */

/** Error bodies larger than this are pages from a proxy, not an error object: left alone. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;

/**
 * Wrap `fetch` so that a non-2xx JSON body without an `error` key but with a `message` is
 * rewritten as `{ "error": body }`. Every other response passes through untouched.
 *
 * @example
 * ```ts
 * new OpenAI({ fetch: withNestedErrorBodies(fetch) });
 * ```
 */
export function withNestedErrorBodies(inner: typeof fetch): typeof fetch {
  return async (input, init) => {
    const response = await inner(input, init);
    if (response.ok || !isJson(response)) return response;
    const length = Number(response.headers.get('content-length') ?? '0');
    if (length > MAX_ERROR_BODY_BYTES) return response;
    const text = await response.text();
    // The body is decoded and may change length: the transfer headers no longer describe it.
    const headers = new Headers(response.headers);
    headers.delete('content-length');
    headers.delete('content-encoding');
    return new Response(nestFlatError(text), { status: response.status, statusText: response.statusText, headers });
  };
}

/**
 * The body text, with a flat error object nested under `error`; anything else unchanged.
 *
 * @example
 * ```ts
 * nestFlatError('{"object":"error","message":"too long","code":400}'); // '{"error":{"object":"error","message":"too long","code":400}}'
 * ```
 */
export function nestFlatError(text: string): string {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return text;
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body) || 'error' in body) return text;
  if (!('message' in body) || typeof body.message !== 'string') return text;
  return JSON.stringify({ error: body });
}

function isJson(response: Response): boolean {
  return (response.headers.get('content-type') ?? '').includes('json');
}
