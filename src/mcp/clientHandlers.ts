import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ResourceUpdatedNotificationSchema, ToolListChangedNotificationSchema, type ClientCapabilities, type RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { RunFor, RunInFlight } from './attribution.ts';
import type { McpServerConfig } from './config.ts';
import { answerElicitation, type McpElicitor } from './elicitation.ts';
import { answerRoots } from './roots.ts';
import { answerSampling, type McpSampler } from './sampling.ts';

export interface McpConnectOptions {
  /** An agent passes its model; used only when the server's config allows sampling. */
  readonly sampler?: McpSampler;
  readonly elicitor?: McpElicitor;
  /** A token or client secret obtained at run time, to redact wherever text goes. */
  onSecret?(secret: string): void;
  onRestarted?(server: string, attempts: number): void;
}

export interface ClientHandlerHooks {
  runsInFlight(): readonly RunInFlight[];
  /** Only streamable HTTP can tell. */
  runOf(serverRequestId: RequestId): string | undefined;
  toolsChanged(): void;
  listenersOf(uri: string): Iterable<(uri: string) => void>;
}

/**
 * Sampling is always offered, so a server whose config does not allow it gets a clear refusal
 * rather than a silent capability gap; roots never `listChanged`, as the list is fixed.
 */
export function clientCapabilities(config: McpServerConfig, options: McpConnectOptions): ClientCapabilities {
  return { sampling: {}, ...(options.elicitor === undefined ? {} : { elicitation: { form: {} } }), ...(config.roots === undefined ? {} : { roots: {} }) };
}

/** The run whose tool call's stream carried it, else the only run with a call in flight. */
function runFor(hooks: ClientHandlerHooks): RunFor {
  return (serverRequestId) => {
    const runs = hooks.runsInFlight();
    const attributed = hooks.runOf(serverRequestId);
    const run = attributed === undefined ? undefined : runs.find((candidate) => candidate.runId === attributed);
    if (run !== undefined) return run;
    return runs.length === 1 ? (runs[0] as RunInFlight) : runs.length;
  };
}

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
        // An async listener's rejection too: unhandled, it would end the process.
        const returned: unknown = listener(uri);
        if (returned instanceof Promise) returned.catch(() => undefined);
      } catch {
        // A listener's failure is its own; the others still hear of the update.
      }
    }
  });
}
