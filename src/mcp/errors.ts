/**
 * Errors of MCP servers. Each names the server and what to do; a server's stderr is quoted only
 * as a bounded tail, never copied into events or journals whole.
 */
import { ActorloopError, type ActorloopErrorOptions } from '../core/errors.ts';
import type { CodesOf } from '../core/errorCodes.ts';

type McpErrorCode = CodesOf<'McpError'>;

/**
 * An MCP server failed or refused; `server` names it and `code` says how:
 * - `mcp_connect_failed`: it could not be started or reached, or failed its handshake;
 * - `mcp_server_closed`: it went away while a call was in flight (it exited, or its connection
 *   closed); the next call restarts it once, and the model gets this as the call's observation;
 * - `mcp_tool_error`: it answered a call with `isError: true` (`tool` names the tool); its text
 *   goes back to the model like any tool error;
 * - `mcp_request_failed`: it refused or failed a request other than a tool call (reading a
 *   resource, subscribing, getting a prompt); `request` says what was asked;
 * - `mcp_authorization_required`: it needs OAuth authorization that cannot be completed without
 *   a person (no `authorize` handler, a token store without tokens, a refusing authorization server);
 * - `mcp_server_unavailable`: an HTTP server whose session was lost could not be reached again
 *   after `attempts` reconnects with backoff; the next call tries again;
 * - `mcp_answer_invalid`: an answer given to its question (`approve(…, { answer })`) does not fit
 *   the form it asked for; the run keeps waiting.
 *
 * @example
 * ```ts
 * McpError.connectFailed('files', 'spawn mcp-files ENOENT', '').code; // 'mcp_connect_failed'
 * catch (e) { if (e instanceof McpError && e.code === 'mcp_authorization_required') console.log('sign in to', e.server); }
 * ```
 */
export class McpError extends ActorloopError {
  declare readonly code: McpErrorCode;
  readonly server: string;
  /** For `mcp_tool_error`: the tool that failed. */
  readonly tool: string | undefined;
  /** For `mcp_request_failed`: what was asked. */
  readonly request: string | undefined;
  /** For `mcp_server_unavailable`: how many reconnects failed. */
  readonly attempts: number | undefined;

  private constructor(
    code: McpErrorCode,
    server: string,
    message: string,
    fields: { readonly tool?: string; readonly request?: string; readonly attempts?: number },
    options?: ActorloopErrorOptions,
  ) {
    super(code, message, options);
    this.server = server;
    this.tool = fields.tool;
    this.request = fields.request;
    this.attempts = fields.attempts;
  }

  static connectFailed(server: string, reason: string, stderrTail: string, options?: ActorloopErrorOptions): McpError {
    return new McpError(
      'mcp_connect_failed',
      server,
      `MCP server "${server}" could not be connected: ${reason}.${stderrTail === '' ? '' : ` Its stderr ended with: "${stderrTail}".`} Check its command, arguments and environment (or URL and headers), and that it speaks MCP on stdout.`,
      {},
      options,
    );
  }

  static serverClosed(server: string, stderrTail: string, options?: ActorloopErrorOptions): McpError {
    return new McpError(
      'mcp_server_closed',
      server,
      `MCP server "${server}" closed while a call was in flight.${stderrTail === '' ? '' : ` Its stderr ended with: "${stderrTail}".`} The next call restarts it once.`,
      {},
      options,
    );
  }

  static toolError(server: string, tool: string, text: string, options?: ActorloopErrorOptions): McpError {
    return new McpError('mcp_tool_error', server, text === '' ? `MCP tool "${tool}" of server "${server}" reported an error without text.` : text, { tool }, options);
  }

  static requestFailed(server: string, request: string, reason: string, options?: ActorloopErrorOptions): McpError {
    return new McpError(
      'mcp_request_failed',
      server,
      `MCP server "${server}" could not ${request}: ${reason}. Check the name or URI against what the server lists, and the arguments it needs.`,
      { request },
      options,
    );
  }

  static authorizationRequired(server: string, reason: string, options?: ActorloopErrorOptions): McpError {
    return new McpError(
      'mcp_authorization_required',
      server,
      `MCP server "${server}" needs OAuth authorization: ${reason}. Give its config auth: { authorize(url) { … return code } } (with redirectUrl) to sign in, client credentials (clientId and clientSecret or privateKey, grant: 'client_credentials'), cross-app access (grant: 'cross_app_access' with the user's idToken and the identity provider's idpTokenEndpoint and idpClientId), or a tokenStore that holds its tokens.`,
      {},
      options,
    );
  }

  static serverUnavailable(server: string, attempts: number, reason: string, options?: ActorloopErrorOptions): McpError {
    return new McpError(
      'mcp_server_unavailable',
      server,
      `MCP server "${server}" is down: ${attempts} reconnects failed (${reason}). Start it again or check its URL; the next call tries again.`,
      { attempts },
      options,
    );
  }

  static answerInvalid(server: string, problems: string, options?: ActorloopErrorOptions): McpError {
    return new McpError(
      'mcp_answer_invalid',
      server,
      `The answer to MCP server "${server}" does not fit the form it asked for (${problems}). The run is still waiting: approve again with a fixed answer, or reject to decline.`,
      {},
      options,
    );
  }
}

/**
 * Whether `error` is an `McpError` with one of `codes`.
 *
 * @example
 * ```ts
 * if (isMcpError(error, 'mcp_server_closed', 'mcp_authorization_required')) throw error;
 * ```
 */
export function isMcpError(error: unknown, ...codes: readonly McpErrorCode[]): error is McpError {
  return error instanceof McpError && codes.includes(error.code);
}
