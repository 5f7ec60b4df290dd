/**
 * A dead stdio server is restarted once, lazily, by the next call (an HTTP one reconnected with
 * bounded backoff), and its resource subscriptions are renewed.
 */
import { StringDecoder } from 'node:string_decoder';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ConfigurationError, describeError } from '../core/errors.ts';
import type { Tool } from '../tools/types.ts';
import { callAttribution } from './attribution.ts';
import { clientCapabilities, serveServerRequests, type McpConnectOptions } from './clientHandlers.ts';
import { checkMcpServerConfig, type McpServerConfig } from './config.ts';
import { isMcpError, McpError } from './errors.ts';
import { linkFailed, MAX_SIGN_INS, notDelivered, refusedAfterAuth, reopenWithBackoff, signIn } from './httpSession.ts';
import { oauthSession, type McpOAuthSession } from './oauth.ts';
import { toPrompt, type McpPrompt, type McpPromptInfo, type RawPromptMessage } from './prompts.ts';
import { capContent, resourceTools, type McpReadOptions, type McpResourceContent, type McpResourceInfo, type McpResourceTemplateInfo } from './resources.ts';
import { mcpTools, type McpCallResult, type McpToolInfo } from './tools.ts';
import { defined } from '../core/defined.ts';

export type { McpConnectOptions } from './clientHandlers.ts';
export { checkMcpServerConfig, mcpSecrets, type McpHttpServerConfig, type McpServerConfig, type McpStdioServerConfig } from './config.ts';

const STDERR_TAIL = 2_000;
/** Off for requests made with a signal: the executor's timeout aborts them instead. */
const NO_REQUEST_TIMEOUT = 2 ** 31 - 1;

export interface McpServer {
  readonly name: string;
  /** Fetched again after the server said its list changed. */
  tools(): Promise<Tool[]>;
  readonly toolsChanged: boolean;
  resources(): Promise<McpResourceInfo[]>;
  resourceTemplates(): Promise<McpResourceTemplateInfo[]>;
  /** Each content says whether it was cut at `maxChars` / `maxBytes`. */
  readResource(uri: string, options?: McpReadOptions): Promise<McpResourceContent[]>;
  subscribe(uri: string, onUpdated: (uri: string) => void): Promise<() => Promise<void>>;
  prompts(): Promise<McpPromptInfo[]>;
  prompt(name: string, args?: Readonly<Record<string, string>>): Promise<McpPrompt>;
  close(): Promise<void>;
}

const DEFAULT_CONNECT_TIMEOUT_MS = 30_000;

interface Connection {
  readonly client: Client;
  /** Finishes a sign-in the server asked for mid-session. */
  readonly transport?: StreamableHTTPClientTransport;
  readonly closed: Promise<void>;
  alive: boolean;
}

function withTimeout<T>(work: Promise<T>, ms: number, onTimeout: () => void): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      onTimeout();
      reject(new Error(`no handshake within ${ms} ms`));
    }, ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Rejects with `McpError` (`mcp_connect_failed`) (with the tail of the server's stderr) when it cannot be started or reached.
 *
 * @example
 * ```ts
 * const server = await connectMcpServer({ name: 'everything', command: 'npx', args: ['@modelcontextprotocol/server-everything'] });
 * ```
 */
export async function connectMcpServer(input: McpServerConfig, options: McpConnectOptions = {}): Promise<McpServer> {
  const config = checkMcpServerConfig(input);
  const { name } = config;
  const timeoutMs = config.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  let stderr = '';
  let connection: Connection | undefined;
  let opening: Promise<Connection> | undefined;
  let closedByUs = false;
  let restartFailed: unknown;
  let toolsChanged = true;
  let cached: Tool[] = [];
  const listeners = new Map<string, Set<(uri: string) => void>>();
  const oauth: McpOAuthSession | undefined = 'url' in config && config.auth !== undefined ? oauthSession(name, config.url, config.auth, (secret) => options.onSecret?.(secret)) : undefined;
  /** A server's request during a call is that run's; `ended` withdraws a question when the run's last call here ends. */
  const inFlight = new Map<string, { calls: number; readonly ended: AbortController }>();
  const attribution = callAttribution();

  const stderrTail = (): string => stderr.trim().slice(-STDERR_TAIL).replace(/\s+/g, ' ');

  async function handshake(transport: Transport): Promise<Connection> {
    const http = transport instanceof StreamableHTTPClientTransport ? { transport } : {};
    if (transport instanceof StreamableHTTPClientTransport) attribution.watch(transport);
    const client = new Client({ name: 'actorloop', version: '0.1.0' }, { capabilities: clientCapabilities(config, options) });
    serveServerRequests(client, config, options, {
      runsInFlight: () => [...inFlight.entries()].map(([runId, entry]) => ({ runId, ended: entry.ended.signal })),
      runOf: (serverRequestId) => attribution.runOf(serverRequestId),
      toolsChanged: () => {
        toolsChanged = true;
      },
      listenersOf: (uri) => listeners.get(uri) ?? [],
    });
    // Protocol noise (e.g. garbage on stdout) is not fatal by itself; a dead link shows as onclose.
    client.onerror = () => undefined;
    let resolveClosed!: () => void;
    const closed = new Promise<void>((resolve) => (resolveClosed = resolve));
    const made: Connection = { client, closed, alive: false, ...http };
    client.onclose = () => {
      made.alive = false;
      resolveClosed();
    };
    try {
      await withTimeout(client.connect(transport), timeoutMs, () => void transport.close().catch(() => undefined));
    } catch (error) {
      await client.close().catch(() => undefined);
      throw error;
    }
    made.alive = true;
    return made;
  }

  async function open(): Promise<Connection> {
    try {
      let made: Connection;
      if ('url' in config) {
        const requestInit = { headers: config.headers ?? {} };
        const authProvider = oauth?.provider;
        const streamable = (): StreamableHTTPClientTransport => new StreamableHTTPClientTransport(new URL(config.url), { requestInit, fetch: attribution.fetch, ...defined({ authProvider }) });
        try {
          const transport = streamable();
          made = await handshake(transport).catch(async (error: unknown) => {
            if (!(error instanceof UnauthorizedError) || oauth === undefined) throw error;
            await signIn(name, transport, oauth, error, options.onSecret);
            return handshake(streamable());
          });
        } catch (error) {
          // A server that only speaks the older SSE transport rejects the streamable handshake.
          if (closedByUs || isMcpError(error, 'mcp_authorization_required') || error instanceof UnauthorizedError) throw error;
          made = await handshake(new SSEClientTransport(new URL(config.url), { requestInit, ...defined({ authProvider }) }));
        }
      } else {
        const transport = new StdioClientTransport({
          command: config.command,
          args: config.args ?? [],
          env: { ...getDefaultEnvironment(), ...config.env },
          ...defined({ cwd: config.cwd }),
          stderr: 'pipe',
        });
        // One decoder for the stream: a character split across chunks stays one character.
        const decoder = new StringDecoder('utf8');
        transport.stderr?.on('data', (chunk: Buffer | string) => {
          stderr = (stderr + (typeof chunk === 'string' ? chunk : decoder.write(chunk))).slice(-4 * STDERR_TAIL);
        });
        made = await handshake(transport);
      }
      toolsChanged = true;
      // A restarted server has forgotten the subscriptions of the one before it.
      await Promise.all([...listeners.keys()].map((uri) => made.client.subscribeResource({ uri }).catch(() => undefined)));
      return made;
    } catch (error) {
      if (isMcpError(error, 'mcp_authorization_required')) throw error;
      if (error instanceof UnauthorizedError) throw McpError.authorizationRequired(name, `the server refused the credentials (${error.message || 'unauthorized'})`, { cause: error });
      throw McpError.connectFailed(name, describeError(error), stderrTail(), { cause: error });
    }
  }

  /** If the one restart fails, later uses fail at once with its error instead of restarting again and again. */
  function live(): Promise<Connection> {
    if (closedByUs) return Promise.reject(McpError.serverClosed(name, ''));
    if (connection?.alive === true) return Promise.resolve(connection);
    if (restartFailed !== undefined) return Promise.reject(restartFailed);
    const restarting = connection !== undefined;
    const http = 'url' in config;
    // An HTTP server down now may be up at the next call: it is tried again each time, boundedly.
    opening ??= (restarting && http ? reopenWithBackoff(name, open, () => closedByUs, options.onRestarted) : open()).then(
      (made) => {
        opening = undefined;
        // Closed while it started: close() saw only the connection before it.
        if (closedByUs) {
          void made.client.close().catch(() => undefined);
          throw McpError.serverClosed(name, '');
        }
        connection = made;
        return made;
      },
      (error: unknown) => {
        opening = undefined;
        if (restarting && !http) restartFailed = error;
        throw error;
      },
    );
    return opening;
  }

  /**
   * A request that never reached a live session is sent once more on a new session, as is any
   * request but a tool call: a tool call that may have run is not repeated behind the model's back.
   */
  async function request<T>(send: (client: Client, signal: AbortSignal | undefined) => Promise<T>, signal?: AbortSignal, repeatable = true): Promise<T> {
    if (!('url' in config)) return requestOnce(send, signal);
    const current = await live();
    await oauth?.refreshIfDue();
    try {
      return await requestOnce(send, signal, current);
    } catch (error) {
      if (error instanceof UnauthorizedError && oauth !== undefined && current.transport !== undefined) return authorizedRetry(send, signal, current.transport, oauth, error);
      if (refusedAfterAuth(error)) throw McpError.authorizationRequired(name, `the server refused the request with ${error.code} after the client authorized`, { cause: error });
      const cause = isMcpError(error, 'mcp_server_closed') ? error.cause : error;
      if (signal?.aborted === true || !linkFailed(cause)) throw error;
      current.alive = false;
      void current.client.close().catch(() => undefined);
      if (!repeatable && !notDelivered(cause)) throw isMcpError(error, 'mcp_server_closed') ? error : McpError.serverClosed(name, '', { cause: error });
      return requestOnce(send, signal);
    }
  }

  /** Bounded: a first sign-in, then step-ups. */
  async function authorizedRetry<T>(send: (client: Client, signal: AbortSignal | undefined) => Promise<T>, signal: AbortSignal | undefined, transport: StreamableHTTPClientTransport, session: McpOAuthSession, first: UnauthorizedError): Promise<T> {
    let refusal = first;
    for (let signIns = 0; signIns < MAX_SIGN_INS; signIns++) {
      await signIn(name, transport, session, refusal, options.onSecret);
      try {
        return await requestOnce(send, signal);
      } catch (error) {
        if (!(error instanceof UnauthorizedError)) throw error;
        refusal = error;
      }
    }
    throw McpError.authorizationRequired(name, `the server still refused after ${MAX_SIGN_INS} sign-ins (it may want scopes this client cannot get)`, { cause: refusal });
  }

  async function requestOnce<T>(send: (client: Client, signal: AbortSignal | undefined) => Promise<T>, signal?: AbortSignal, on?: Connection): Promise<T> {
    const { client, closed } = on ?? (await live());
    const sent = send(client, signal);
    const gone = closed.then(() => Promise.reject(McpError.serverClosed(name, stderrTail())));
    try {
      return await Promise.race([sent, gone]);
    } catch (error) {
      if (signal?.aborted === true) throw signal.reason;
      if (isMcpError(error, 'mcp_server_closed')) throw error;
      if (connection?.alive !== true) throw McpError.serverClosed(name, stderrTail(), { cause: error });
      throw error;
    } finally {
      sent.catch(() => undefined);
      gone.catch(() => undefined);
    }
  }

  async function ask<T>(what: string, send: (client: Client, signal: AbortSignal | undefined) => Promise<T>, signal?: AbortSignal): Promise<T> {
    try {
      return await request(send, signal);
    } catch (error) {
      if (isMcpError(error, 'mcp_server_closed', 'mcp_server_unavailable', 'mcp_authorization_required') || signal?.aborted === true) throw error;
      throw McpError.requestFailed(name, what, describeError(error).replace(/MCP error -?\d+: /g, ''), { cause: error });
    }
  }

  async function call(tool: string, args: Record<string, unknown>, signal: AbortSignal, runId: string): Promise<McpCallResult> {
    const entry = inFlight.get(runId) ?? { calls: 0, ended: new AbortController() };
    entry.calls += 1;
    inFlight.set(runId, entry);
    // Tagged so a request the server sends on this call's stream is known to be this run's.
    const params = { name: tool, arguments: args };
    attribution.tag(params, runId);
    try {
      return await request((client) => client.callTool(params, undefined, { signal, timeout: NO_REQUEST_TIMEOUT }) as Promise<McpCallResult>, signal, false);
    } finally {
      attribution.untag(params);
      entry.calls -= 1;
      if (entry.calls === 0) {
        inFlight.delete(runId);
        entry.ended.abort();
      }
    }
  }

  /** A cursor named twice would list the same pages forever. */
  function nextCursor(seen: Set<string>, cursor: string | undefined, what: string): string | undefined {
    if (cursor === undefined) return undefined;
    if (seen.has(cursor)) throw McpError.requestFailed(name, what, `it sent the page cursor ${JSON.stringify(cursor)} twice, so its pages loop`);
    seen.add(cursor);
    return cursor;
  }

  async function allPages<T>(what: string, page: (client: Client, cursor: string | undefined) => Promise<{ items: T[]; nextCursor?: string | undefined }>): Promise<T[]> {
    const all: T[] = [];
    const seen = new Set<string>();
    let cursor: string | undefined;
    do {
      const got = await ask(what, (client) => page(client, cursor));
      all.push(...got.items);
      cursor = nextCursor(seen, got.nextCursor, what);
    } while (cursor !== undefined);
    return all;
  }

  const offers = (what: 'resources' | 'prompts'): boolean => connection?.client.getServerCapabilities()?.[what] !== undefined;
  const params = (cursor: string | undefined) => defined({ cursor });
  // Requests nobody can cancel keep the SDK's own timeout, so a hung server fails them instead of hanging them.
  const listed = {};

  async function resources(): Promise<McpResourceInfo[]> {
    if (!offers('resources')) return [];
    return allPages('list resources', async (client, cursor) => {
      const page = await client.listResources(params(cursor), listed);
      return { items: page.resources as McpResourceInfo[], nextCursor: page.nextCursor };
    });
  }

  async function resourceTemplates(): Promise<McpResourceTemplateInfo[]> {
    if (!offers('resources')) return [];
    return allPages('list resource templates', async (client, cursor) => {
      const page = await client.listResourceTemplates(params(cursor), listed);
      return { items: page.resourceTemplates as McpResourceTemplateInfo[], nextCursor: page.nextCursor };
    });
  }

  async function readResource(uri: string, options: McpReadOptions = {}): Promise<McpResourceContent[]> {
    if (typeof uri !== 'string' || uri === '') throw new ConfigurationError(`readResource needs a resource URI (got ${JSON.stringify(uri)}); list them with resources().`);
    for (const key of ['maxChars', 'maxBytes'] as const) {
      const cap = options[key];
      if (cap !== undefined && !(Number.isSafeInteger(cap) && cap > 0)) throw new ConfigurationError(`readResource's ${key} must be a positive whole number (got ${String(cap)}).`);
    }
    const what = `read resource ${JSON.stringify(uri)}`;
    if (!offers('resources')) throw McpError.requestFailed(name, what, 'it offers no resources');
    const { signal } = options;
    const result = await ask(what, (client) => client.readResource({ uri }, signal === undefined ? listed : { signal, timeout: NO_REQUEST_TIMEOUT }), signal);
    return result.contents.map((content) => capContent(content, options));
  }

  async function subscribe(uri: string, onUpdated: (uri: string) => void): Promise<() => Promise<void>> {
    const what = `subscribe to resource ${JSON.stringify(uri)}`;
    if (typeof onUpdated !== 'function') throw new ConfigurationError(`subscribe needs a function to call on updates of ${JSON.stringify(uri)}.`);
    await live();
    if (connection?.client.getServerCapabilities()?.resources?.subscribe !== true) throw McpError.requestFailed(name, what, 'it does not offer resource subscriptions');
    const set = listeners.get(uri) ?? new Set();
    const first = set.size === 0;
    set.add(onUpdated);
    listeners.set(uri, set);
    try {
      if (first) await ask(what, (client) => client.subscribeResource({ uri }, listed));
    } catch (error) {
      set.delete(onUpdated);
      if (set.size === 0) listeners.delete(uri);
      throw error;
    }
    let done = false;
    return async () => {
      if (done) return;
      done = true;
      set.delete(onUpdated);
      if (set.size > 0 || listeners.get(uri) !== set) return;
      listeners.delete(uri);
      if (!closedByUs) await ask(`unsubscribe from resource ${JSON.stringify(uri)}`, (client) => client.unsubscribeResource({ uri }, listed));
    };
  }

  async function prompts(): Promise<McpPromptInfo[]> {
    if (!offers('prompts')) return [];
    return allPages('list prompts', async (client, cursor) => {
      const page = await client.listPrompts(params(cursor), listed);
      return { items: page.prompts as McpPromptInfo[], nextCursor: page.nextCursor };
    });
  }

  async function prompt(promptName: string, args: Readonly<Record<string, string>> = {}): Promise<McpPrompt> {
    const what = `get prompt ${JSON.stringify(promptName)}`;
    if (typeof promptName !== 'string' || promptName === '') throw new ConfigurationError(`prompt needs a prompt name (got ${JSON.stringify(promptName)}); list them with prompts().`);
    const bad = Object.entries(args).find(([, value]) => typeof value !== 'string');
    if (bad !== undefined) throw new ConfigurationError(`Prompt arguments are strings; "${bad[0]}" is ${typeof bad[1]}. Convert it, e.g. String(value).`);
    if (!offers('prompts')) throw McpError.requestFailed(name, what, 'it offers no prompts');
    const result = await ask(what, (client) => client.getPrompt({ name: promptName, arguments: { ...args } }, listed));
    return toPrompt({ ...defined({ description: result.description }), messages: result.messages as RawPromptMessage[] }, { server: name, name: promptName });
  }

  async function listTools(client: Client): Promise<McpToolInfo[]> {
    const all: McpToolInfo[] = [];
    const seen = new Set<string>();
    let cursor: string | undefined;
    do {
      const page = await client.listTools(defined({ cursor }));
      all.push(...(page.tools as McpToolInfo[]));
      cursor = nextCursor(seen, page.nextCursor, 'list tools');
    } while (cursor !== undefined);
    return all;
  }

  connection = await live();
  if (config.resources !== undefined && config.resources !== false && !offers('resources')) {
    closedByUs = true;
    await connection.client.close().catch(() => undefined);
    throw new ConfigurationError(`MCP server "${name}" offers no resources, but its config asks for resources: '${config.resources}'. Remove the option (or set it to false).`);
  }
  const ownResourceTools = config.resources === 'tools'
    ? resourceTools(name, {
        list: async () => {
          const [listedResources, templates] = await Promise.all([resources(), resourceTemplates()]);
          return { resources: listedResources, templates };
        },
        read: readResource,
      })
    : [];
  return {
    name,
    get toolsChanged() {
      return toolsChanged;
    },
    async tools() {
      if (!toolsChanged && connection?.alive === true) return cached;
      // Cleared before listing: a change notice that arrives during the listing marks it stale again.
      toolsChanged = false;
      // A list that could not be used is asked for again next time, not answered with the one before.
      try {
        const own = mcpTools(name, await request((client) => listTools(client)), call, config);
        const taken = new Set(own.map((tool) => tool.name));
        const clash = ownResourceTools.find((tool) => taken.has(tool.name));
        if (clash !== undefined) throw new ConfigurationError(`MCP server "${name}" has a tool that becomes "${clash.name}", the name of its resource tool; set resources: 'context' or false for it.`);
        cached = [...own, ...ownResourceTools];
        return cached;
      } catch (error) {
        toolsChanged = true;
        throw error;
      }
    },
    resources,
    resourceTemplates,
    readResource,
    subscribe,
    prompts,
    prompt,
    async close() {
      closedByUs = true;
      await connection?.client.close().catch(() => undefined);
    },
  };
}
