/**
 * Errors of MCP servers. Each names the server and what to do; a server's stderr is quoted only
 * as a bounded tail, never copied into events or journals whole.
 */
import { ActorloopError, type ActorloopErrorOptions } from '../core/errors.ts';

/**
 * A server could not be started or reached, or failed its handshake.
 *
 * @example
 * ```ts
 * new McpConnectError('files', 'spawn mcp-files ENOENT', '').code; // 'mcp_connect_failed'
 * ```
 */
export class McpConnectError extends ActorloopError {
  readonly code = 'mcp_connect_failed' as const;
  readonly blame = 'tool' as const;
  readonly server: string;

  constructor(server: string, reason: string, stderrTail: string, options?: ActorloopErrorOptions) {
    super(
      `MCP server "${server}" could not be connected: ${reason}.${stderrTail === '' ? '' : ` Its stderr ended with: "${stderrTail}".`} Check its command, arguments and environment (or URL and headers), and that it speaks MCP on stdout.`,
      options,
    );
    this.server = server;
  }
}

/**
 * A server went away while a call was in flight (it exited, or its connection closed). The
 * next call restarts it once; the model gets this as the call's error observation.
 *
 * @example
 * ```ts
 * new McpServerClosedError('files', '').code; // 'mcp_server_closed'
 * ```
 */
export class McpServerClosedError extends ActorloopError {
  readonly code = 'mcp_server_closed' as const;
  readonly blame = 'tool' as const;
  readonly server: string;

  constructor(server: string, stderrTail: string, options?: ActorloopErrorOptions) {
    super(
      `MCP server "${server}" closed while a call was in flight.${stderrTail === '' ? '' : ` Its stderr ended with: "${stderrTail}".`} The next call restarts it once.`,
      options,
    );
    this.server = server;
  }
}

/**
 * A server answered a call with `isError: true`: the tool itself failed. Its text goes back to
 * the model like any tool error.
 *
 * @example
 * ```ts
 * new McpToolError('files', 'read_file', 'Access denied').code; // 'mcp_tool_error'
 * ```
 */
export class McpToolError extends ActorloopError {
  readonly code = 'mcp_tool_error' as const;
  readonly blame = 'tool' as const;
  readonly server: string;
  readonly tool: string;

  constructor(server: string, tool: string, text: string, options?: ActorloopErrorOptions) {
    super(text === '' ? `MCP tool "${tool}" of server "${server}" reported an error without text.` : text, options);
    this.server = server;
    this.tool = tool;
  }
}

/**
 * A server refused or failed a request other than a tool call: reading a resource, subscribing,
 * getting a prompt. Names the server, what was asked and the server's own words.
 *
 * @example
 * ```ts
 * new McpRequestError('docs', 'read resource "demo://x"', 'Resource not found').code; // 'mcp_request_failed'
 * ```
 */
export class McpRequestError extends ActorloopError {
  readonly code = 'mcp_request_failed' as const;
  readonly blame = 'tool' as const;
  readonly server: string;
  readonly request: string;

  constructor(server: string, request: string, reason: string, options?: ActorloopErrorOptions) {
    super(`MCP server "${server}" could not ${request}: ${reason}. Check the name or URI against what the server lists, and the arguments it needs.`, options);
    this.server = server;
    this.request = request;
  }
}

/**
 * A server needs OAuth authorization that cannot be completed without a person: a browser sign-in
 * with no `authorize` handler, a token store without tokens, or an authorization server that refused.
 *
 * @example
 * ```ts
 * new McpAuthorizationError('search', 'it needs a sign-in in a browser').code; // 'mcp_authorization_required'
 * ```
 */
export class McpAuthorizationError extends ActorloopError {
  readonly code = 'mcp_authorization_required' as const;
  readonly blame = 'user' as const;
  readonly server: string;

  constructor(server: string, reason: string, options?: ActorloopErrorOptions) {
    super(
      `MCP server "${server}" needs OAuth authorization: ${reason}. Give its config auth: { authorize(url) { … return code } } (with redirectUrl) to sign in, client credentials (clientId and clientSecret or privateKey, grant: 'client_credentials'), cross-app access (grant: 'cross_app_access' with the user's idToken and the identity provider's idpTokenEndpoint and idpClientId), or a tokenStore that holds its tokens.`,
      options,
    );
    this.server = server;
  }
}

/**
 * An HTTP server whose session was lost could not be reached again after a bounded number of
 * reconnects with backoff. The next call tries again.
 *
 * @example
 * ```ts
 * new McpServerUnavailableError('search', 3, 'fetch failed').code; // 'mcp_server_unavailable'
 * ```
 */
export class McpServerUnavailableError extends ActorloopError {
  readonly code = 'mcp_server_unavailable' as const;
  readonly blame = 'tool' as const;
  readonly server: string;
  readonly attempts: number;

  constructor(server: string, attempts: number, reason: string, options?: ActorloopErrorOptions) {
    super(`MCP server "${server}" is down: ${attempts} reconnects failed (${reason}). Start it again or check its URL; the next call tries again.`, options);
    this.server = server;
    this.attempts = attempts;
  }
}

/**
 * An answer given to an MCP server's question (`approve(…, { answer })`) does not fit the form
 * the server asked for. The run keeps waiting: approve again with a fixed answer, or reject.
 *
 * @example
 * ```ts
 * new McpAnswerError('people', 'age: expected number').code; // 'mcp_answer_invalid'
 * ```
 */
export class McpAnswerError extends ActorloopError {
  readonly code = 'mcp_answer_invalid' as const;
  readonly blame = 'user' as const;
  readonly server: string;

  constructor(server: string, problems: string, options?: ActorloopErrorOptions) {
    super(`The answer to MCP server "${server}" does not fit the form it asked for (${problems}). The run is still waiting: approve again with a fixed answer, or reject to decline.`, options);
    this.server = server;
  }
}
