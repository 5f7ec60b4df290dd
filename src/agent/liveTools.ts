/**
 * An agent's tools when some come from MCP servers: its own tools plus each server's, behind the
 * same registry interface the gate and executor read. The servers are connected on first use
 * (the first reason step of the agent's first run) and their lists fetched again after a server
 * says its tools changed, between iterations.
 */
import type { ToolSpec } from '../core/provider.ts';
import { connectMcpServer, type McpConnectOptions, type McpServer, type McpServerConfig } from '../mcp/connect.ts';
import { applyToolProfile, type ToolProfile } from '../tools/profile.ts';
import { createToolRegistry, type ToolRegistry } from '../tools/registry.ts';
import type { Tool } from '../tools/types.ts';

export interface LiveTools extends ToolRegistry {
  /** Connect on first use; fetch the tools of servers whose list changed. Returns the specs the model gets. */
  sync(): Promise<readonly ToolSpec[]>;
  /** The connected servers, connecting on first use. */
  servers(): Promise<readonly McpServer[]>;
  /** Close every server connection. */
  close(): Promise<void>;
}

/**
 * @example
 * ```ts
 * const tools = createLiveTools([add], [{ name: 'files', command: 'mcp-files', args: [root] }]);
 * await tools.sync(); // connects, lists: add, files_read_file, …
 * ```
 */
export function createLiveTools(
  local: readonly Tool[],
  servers: readonly McpServerConfig[],
  profile?: ToolProfile,
  wrap: (tool: Tool) => Tool = (tool) => tool,
  options: McpConnectOptions = {},
): LiveTools {
  const build = (tools: readonly Tool[]): ToolRegistry => createToolRegistry(profile === undefined ? tools : applyToolProfile(tools, profile));
  let current = build(local);
  let connecting: Promise<McpServer[]> | undefined;
  let closed = false;

  function connect(): Promise<McpServer[]> {
    // A failed connect is not cached: the next run tries again.
    connecting ??= Promise.all(servers.map((server) => connectMcpServer(server, options))).catch((error: unknown) => {
      connecting = undefined;
      throw error;
    });
    return connecting;
  }

  async function sync(): Promise<readonly ToolSpec[]> {
    const connected = await connect();
    if (closed) {
      await Promise.all(connected.map((server) => server.close()));
      return current.specs;
    }
    if (connected.some((server) => server.toolsChanged)) {
      const fetched = await Promise.all(connected.map((server) => server.tools()));
      current = build([...local, ...fetched.flat().map(wrap)]);
    }
    return current.specs;
  }

  return {
    get: (name) => current.get(name),
    has: (name) => current.has(name),
    get specs() {
      return current.specs;
    },
    get names() {
      return current.names;
    },
    get tools() {
      return current.tools;
    },
    get size() {
      return current.size;
    },
    sync,
    servers: connect,
    async close() {
      closed = true;
      const connected = await connecting?.catch(() => []);
      await Promise.all((connected ?? []).map((server) => server.close()));
    },
  };
}
