/**
 * The client's side of an MCP connection: what it offers the server and how it answers the
 * server's requests (sampling, elicitation, roots) and notifications (tool list changed,
 * resource updated). The connection itself lives in `connect.ts`.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ResourceUpdatedNotificationSchema, ToolListChangedNotificationSchema, type ClientCapabilities, type RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { RunFor, RunInFlight } from './attribution.ts';
import type { McpServerConfig } from './config.ts';
import { answerElicitation, type McpElicitor } from './elicitation.ts';
import { answerRoots } from './roots.ts';
import { answerSampling, type McpSampler } from './sampling.ts';

/** What the host gives a connection beyond its config, and what the connection tells it. */
export interface McpConnectOptions {
  /** Answers the server's sampling requests when its config allows them (an agent passes its model). */
  readonly sampler?: McpSampler;
  /** Puts the server's questions (elicitation) to a human; an agent makes each one a human turn of its run. */
  readonly elicitor?: McpElicitor;
  /** A token or client secret obtained at run time, to redact wherever text goes. */
  onSecret?(secret: string): void;
  /** The server's session was lost and a new one is up (`attempts` reconnects it took). */
  onRestarted?(server: string, attempts: number): void;
}

/** What the handlers need from the connection. */
export interface ClientHandlerHooks {
  /** The runs with a tool call in flight on this server now. */
  runsInFlight(): readonly RunInFlight[];
  /** The run whose tool call's stream carried a server request, when the transport can tell (streamable HTTP). */
  runOf(serverRequestId: RequestId): string | undefined;
  /** The server said its tool list changed. */
  toolsChanged(): void;
  /** The listeners of a resource's updates. */
  listenersOf(uri: string): Iterable<(uri: string) => void>;
}

/**
 * What the client offers: sampling always (a server whose config does not allow it gets a clear
 * refusal, not a silent capability gap); form elicitation when someone can answer (an agent's
 * run always can); roots when the config lists some, never `listChanged` (the list is fixed for
 * the connection's life).
 */
export function clientCapabilities(config: McpServerConfig, options: McpConnectOptions): ClientCapabilities {
  return { sampling: {}, ...(options.elicitor === undefined ? {} : { elicitation: { form: {} } }), ...(config.roots === undefined ? {} : { roots: {} }) };
}

/** The run a server's request is for: the one whose tool call's stream carried it, else the only run with a call in flight. */
function runFor(hooks: ClientHandlerHooks): RunFor {
  return (serverRequestId) => {
    const runs = hooks.runsInFlight();
    const attributed = hooks.runOf(serverRequestId);
    const run = attributed === undefined ? undefined : runs.find((candidate) => candidate.runId === attributed);
    if (run !== undefined) return run;
    return runs.length === 1 ? (runs[0] as RunInFlight) : runs.length;
  };
}

/** Install the answers to the server's requests and notifications on a new client. */
export function serveServerRequests(client: Client, config: McpServerConfig, options: McpConnectOptions, hooks: ClientHandlerHooks): void {
  const { name } = config;
  answerSampling(client, name, config.sampling, runFor(hooks), options.sampler);
  if (options.elicitor !== undefined) answerElicitation(client, name, runFor(hooks), options.elicitor);
  if (config.roots !== undefined) answerRoots(client, config.roots);
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => hooks.toolsChanged());
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
    const { uri } = notification.params;
    for (const listener of hooks.listenersOf(uri)) {
      try {
        listener(uri);
      } catch {
        // A listener's failure is its own; the others still hear of the update.
      }
    }
  });
}
