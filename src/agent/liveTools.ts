/** An agent's own tools plus its MCP servers', connected on first use and listed again when a server says they changed. */
import type { ToolSpec } from '../core/provider.ts';
import { connectMcpServer, type McpConnectOptions, type McpServer, type McpServerConfig } from '../mcp/connect.ts';
import { applyToolProfile, type ToolProfile } from '../tools/profile.ts';
import { createToolRegistry, type ToolRegistry } from '../tools/registry.ts';
import type { Tool } from '../tools/types.ts';
import { ConfigurationError } from '../core/errors.ts';

export interface LiveTools extends ToolRegistry {
  /** Connect on first use; fetch the tools of servers whose list changed. */
  sync(): Promise<readonly ToolSpec[]>;
  servers(): Promise<readonly McpServer[]>;
  close(): Promise<void>;
}

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
  let built = false;

  function connect(): Promise<McpServer[]> {
    // A failed connect is not cached: the next run tries again, so the servers that did start are stopped.
    connecting ??= Promise.allSettled(servers.map((server) => connectMcpServer(server, options))).then(async (outcomes) => {
      const failed = outcomes.find((outcome) => outcome.status === 'rejected');
      const started = outcomes.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : []));
      if (failed === undefined) return started;
      connecting = undefined;
      await Promise.all(started.map((server) => server.close()));
      throw failed.reason;
    });
    return connecting;
  }

  async function sync(): Promise<readonly ToolSpec[]> {
    const connected = await connect();
    if (closed) {
      await Promise.all(connected.map((server) => server.close()));
      return current.specs;
    }
    // A list that failed to build is built again: the servers no longer say it changed.
    if (!built || connected.some((server) => server.toolsChanged)) {
      const fetched = await Promise.all(connected.map((server) => server.tools()));
      built = false;
      try {
        current = build([...local, ...fetched.flat().map(wrap)]);
      } catch (error) {
        throw clashOf(local, connected, fetched) ?? error;
      }
      built = true;
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

/** The registry can only number two tools of one name; this says where each came from. */
function clashOf(local: readonly Tool[], servers: readonly McpServer[], fetched: readonly (readonly Tool[])[]): ConfigurationError | undefined {
  const origin = new Map<string, string>(local.map((tool) => [tool.name, 'a tool of the agent']));
  for (const [index, tools] of fetched.entries()) {
    const here = `a tool of MCP server "${servers[index]?.name ?? '?'}"`;
    for (const tool of tools) {
      const earlier = origin.get(tool.name);
      if (earlier !== undefined) {
        return new ConfigurationError(`Two tools are named "${tool.name}": ${earlier} and ${here}. Rename the agent's tool, or the MCP server in its config (its tools are named <server>_<tool>).`);
      }
      origin.set(tool.name, here);
    }
  }
  return undefined;
}
