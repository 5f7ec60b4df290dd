import type { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { type StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { describeError } from '../core/errors.ts';
import { isMcpError, McpError } from './errors.ts';
import type { McpOAuthSession } from './oauth.ts';

const RECONNECT_DELAYS_MS = [0, 250, 1_000] as const;
/** A first sign-in, then step-ups to more scopes, before a request is refused for good. */
export const MAX_SIGN_INS = 3;

/** The server refused the connection, or no longer knows the session. */
export function notDelivered(error: unknown): boolean {
  if (error instanceof StreamableHTTPError) return error.code === 404;
  const cause = error instanceof Error ? (error.cause as { code?: unknown } | undefined) : undefined;
  return error instanceof TypeError && cause?.code === 'ECONNREFUSED';
}

export function linkFailed(error: unknown): boolean {
  return notDelivered(error) || (error instanceof TypeError && /fetch failed/.test(error.message));
}

/** The SDK gives up on a 401 or 403 it cannot fix. */
export function refusedAfterAuth(error: unknown): error is StreamableHTTPError {
  return error instanceof StreamableHTTPError && (error.code === 401 || error.code === 403);
}

export async function reopenWithBackoff<T>(server: string, open: () => Promise<T>, closedByUs: () => boolean, onRestarted?: (server: string, attempts: number) => void): Promise<T> {
  let last: unknown;
  for (const [attempt, delay] of RECONNECT_DELAYS_MS.entries()) {
    if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
    if (closedByUs()) throw McpError.serverClosed(server, '');
    try {
      const made = await open();
      onRestarted?.(server, attempt + 1);
      return made;
    } catch (error) {
      if (isMcpError(error, 'mcp_authorization_required')) throw error;
      last = error;
    }
  }
  throw McpError.serverUnavailable(server, RECONNECT_DELAYS_MS.length, describeError(isMcpError(last, 'mcp_connect_failed') ? last.cause : last), { cause: last });
}

export async function signIn(server: string, transport: StreamableHTTPClientTransport, session: McpOAuthSession, refusal: UnauthorizedError, onSecret?: (secret: string) => void): Promise<void> {
  const url = session.pendingAuthorization();
  if (url === undefined) throw McpError.authorizationRequired(server, `the authorization server refused (${refusal.message || 'unauthorized'})`, { cause: refusal });
  if (session.authorize === undefined) throw McpError.authorizationRequired(server, `a person must sign in at ${url.origin}${url.pathname} and no authorize handler was given`);
  const code = await session.authorize(url);
  if (typeof code !== 'string' || code === '') throw McpError.authorizationRequired(server, 'the authorize handler returned no authorization code');
  onSecret?.(code);
  await transport.finishAuth(code);
}
