/**
 * `connectMcpServer`: one MCP server, over stdio (a child process) or streamable HTTP (falling
 * back to SSE for servers that only have that), with its tools as actorloop tools.
 *
 * A server that dies is restarted once, lazily, by the next call; `notifications/tools/list_changed`
 * marks the tool list stale so the next `tools()` fetches it again. A stdio server's stderr is
 * kept as a bounded tail for error messages only.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { ConfigurationError, describeError } from '../core/errors.ts';
import type { Tool } from '../tools/types.ts';
import { McpConnectError, McpServerClosedError } from './errors.ts';
import { mcpTools, type McpCallResult, type McpToolInfo } from './tools.ts';

const SERVER_NAME = /^[A-Za-z0-9_-]{1,32}$/;
const STDERR_TAIL = 2_000;
/** The SDK's own per-request timeout is off: the executor's timeout aborts the call instead. */
const NO_REQUEST_TIMEOUT = 2 ** 31 - 1;

const stdioConfig = z.strictObject({
  name: z.string().regex(SERVER_NAME),
  command: z.string().min(1),
  args: z.array(z.string()).optional(),
  env: z.record(z.string(), z.string()).optional(),
  cwd: z.string().min(1).optional(),
  connectTimeoutMs: z.number().int().positive().optional(),
});
const httpConfig = z.strictObject({
  name: z.string().regex(SERVER_NAME),
  url: z.url({ protocol: /^https?$/ }),
  headers: z.record(z.string(), z.string()).optional(),
  connectTimeoutMs: z.number().int().positive().optional(),
});

/** A server started as a child process, speaking MCP on its stdin and stdout. */
export type McpStdioServerConfig = z.infer<typeof stdioConfig>;
/** A server reached over streamable HTTP (or SSE). */
export type McpHttpServerConfig = z.infer<typeof httpConfig>;
/**
 * Where an MCP server is. `name` (1–32 of `[A-Za-z0-9_-]`) prefixes its tools' names; values of
 * `env` and `headers` are treated as secrets.
 *
 * @example
 * ```ts
 * const files: McpServerConfig = { name: 'files', command: 'npx', args: ['@modelcontextprotocol/server-filesystem', root] };
 * const remote: McpServerConfig = { name: 'search', url: 'https://mcp.example.com/mcp', headers: { authorization: `Bearer ${token}` } };
 * ```
 */
export type McpServerConfig = McpStdioServerConfig | McpHttpServerConfig;

/** A connected server. */
export interface McpServer {
  readonly name: string;
  /** Its tools as actorloop tools, fetched again after the server said its list changed. */
  tools(): Promise<Tool[]>;
  /** Whether the server said its tool list changed since the last `tools()`. */
  readonly toolsChanged: boolean;
  close(): Promise<void>;
}

const DEFAULT_CONNECT_TIMEOUT_MS = 30_000;

/**
 * Check a server config; a bad one is a `ConfigurationError` saying what is wrong.
 *
 * @example
 * ```ts
 * checkMcpServerConfig({ name: 'x', command: 'node', args: ['server.js'] });
 * ```
 */
export function checkMcpServerConfig(config: unknown): McpServerConfig {
  const isHttp = config !== null && typeof config === 'object' && 'url' in config;
  const parsed = (isHttp ? httpConfig : stdioConfig).safeParse(config);
  if (parsed.success) return parsed.data;
  const name = config !== null && typeof config === 'object' && 'name' in config ? String((config as { name: unknown }).name) : '(unnamed)';
  const issues = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('; ');
  throw new ConfigurationError(
    `MCP server config "${name}" is invalid (${issues}). Use { name, command, args?, env?, cwd? } for stdio or { name, url, headers? } for HTTP; name is 1–32 of A-Z, a-z, 0-9, "_", "-".`,
  );
}

/**
 * The secret values of a config, for redaction: env and header values, and the credential of an
 * `Authorization`-style value (`Bearer <token>`) on its own, since a tool may echo just that.
 *
 * @example
 * ```ts
 * mcpSecrets({ name: 'x', url: 'https://h/mcp', headers: { authorization: 'Bearer t0ken' } }); // ['Bearer t0ken', 't0ken']
 * ```
 */
export function mcpSecrets(config: McpServerConfig): string[] {
  const values = 'url' in config ? Object.values(config.headers ?? {}) : Object.values(config.env ?? {});
  const credentials = values.flatMap((value) => /^[A-Za-z]+\s+(\S{4,})$/.exec(value)?.[1] ?? []);
  return [...values, ...credentials].filter((value) => value.length >= 4);
}

interface Connection {
  readonly client: Client;
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
 * Connect to an MCP server. Rejects with `McpConnectError` (naming the server, with the tail of
 * its stderr) when it cannot be started or reached, or does not complete the handshake.
 *
 * @example
 * ```ts
 * const server = await connectMcpServer({ name: 'everything', command: 'npx', args: ['@modelcontextprotocol/server-everything'] });
 * const tools = await server.tools(); // everything_echo, everything_add, …
 * await server.close();
 * ```
 */
export async function connectMcpServer(input: McpServerConfig): Promise<McpServer> {
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

  const stderrTail = (): string => stderr.trim().slice(-STDERR_TAIL).replace(/\s+/g, ' ');

  /** One client over one transport, handshake done; its `closed` settles when the link goes. */
  async function handshake(transport: Transport): Promise<Connection> {
    const client = new Client({ name: 'actorloop', version: '0.1.0' }, { capabilities: {} });
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      toolsChanged = true;
    });
    // Protocol noise (e.g. garbage on stdout) is not fatal by itself; a dead link shows as onclose.
    client.onerror = () => undefined;
    let resolveClosed!: () => void;
    const closed = new Promise<void>((resolve) => (resolveClosed = resolve));
    const made: Connection = { client, closed, alive: false };
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
        try {
          made = await handshake(new StreamableHTTPClientTransport(new URL(config.url), { requestInit }));
        } catch (error) {
          // A server that only speaks the older SSE transport rejects the streamable handshake.
          if (closedByUs) throw error;
          made = await handshake(new SSEClientTransport(new URL(config.url), { requestInit }));
        }
      } else {
        const transport = new StdioClientTransport({
          command: config.command,
          args: config.args ?? [],
          env: { ...getDefaultEnvironment(), ...config.env },
          ...(config.cwd === undefined ? {} : { cwd: config.cwd }),
          stderr: 'pipe',
        });
        transport.stderr?.on('data', (chunk: Buffer | string) => {
          stderr = (stderr + String(chunk)).slice(-4 * STDERR_TAIL);
        });
        made = await handshake(transport);
      }
      toolsChanged = true;
      return made;
    } catch (error) {
      throw new McpConnectError(name, describeError(error), stderrTail(), { cause: error });
    }
  }

  /**
   * The live connection. A server that died is restarted once, by the next use; if that restart
   * fails, later uses fail at once with the restart's error instead of starting it again and again.
   */
  function live(): Promise<Connection> {
    if (closedByUs) return Promise.reject(new McpServerClosedError(name, ''));
    if (connection?.alive === true) return Promise.resolve(connection);
    if (restartFailed !== undefined) return Promise.reject(restartFailed);
    const restarting = connection !== undefined;
    opening ??= open().then(
      (made) => {
        connection = made;
        opening = undefined;
        return made;
      },
      (error: unknown) => {
        opening = undefined;
        if (restarting) restartFailed = error;
        throw error;
      },
    );
    return opening;
  }

  async function call(tool: string, args: Record<string, unknown>, signal: AbortSignal): Promise<McpCallResult> {
    const { client, closed } = await live();
    const request = client.callTool({ name: tool, arguments: args }, undefined, { signal, timeout: NO_REQUEST_TIMEOUT });
    // A server that exits mid-call: the call fails now with a typed error, not whenever the SDK notices.
    const gone = closed.then(() => Promise.reject(new McpServerClosedError(name, stderrTail())));
    try {
      return (await Promise.race([request, gone])) as McpCallResult;
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      if (error instanceof McpServerClosedError) throw error;
      if (connection?.alive !== true) throw new McpServerClosedError(name, stderrTail(), { cause: error });
      throw error;
    } finally {
      request.catch(() => undefined);
      gone.catch(() => undefined);
    }
  }

  async function listTools(client: Client): Promise<McpToolInfo[]> {
    const all: McpToolInfo[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor === undefined ? {} : { cursor });
      all.push(...(page.tools as McpToolInfo[]));
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    return all;
  }

  connection = await live();
  return {
    name,
    get toolsChanged() {
      return toolsChanged;
    },
    async tools() {
      if (!toolsChanged && connection?.alive === true) return cached;
      const { client } = await live();
      toolsChanged = false;
      cached = mcpTools(name, await listTools(client), call);
      return cached;
    },
    async close() {
      closedByUs = true;
      await connection?.client.close().catch(() => undefined);
    },
  };
}
