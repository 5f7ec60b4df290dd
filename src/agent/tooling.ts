import type { InferenceProvider } from '../core/provider.ts';
import type { ImagePart } from '../core/messages.ts';
import { checkParts, type ContentLimits } from '../conversation/parts.ts';
import { ConversationError } from '../conversation/errors.ts';
import { createExecutor, type Executor } from '../executor/executor.ts';
import { storeParts, type BlobStore } from '../persistence/blobs.ts';
import { createBreakerRegistry, type BreakerRegistry } from '../resilience/breakerRegistry.ts';
import type { Redactor } from '../security/redactor.ts';
import { applyToolProfile } from '../tools/profile.ts';
import { createToolRegistry, type ToolRegistry } from '../tools/registry.ts';
import type { Tool } from '../tools/types.ts';
import type { RunContext } from '../run/context.ts';
import type { AgentSettings } from './config.ts';
import { createLiveTools, type LiveTools } from './liveTools.ts';
import { durableElicitor, mcpElicitor, mcpSampler } from './mcpRequests.ts';
import type { BoundRuntime } from './types.ts';
import { defined } from '../core/defined.ts';

/** The tools an agent offers and how their calls run. */
export interface AgentTooling {
  readonly mcp: LiveTools | undefined;
  readonly registry: ToolRegistry;
  readonly breakers: BreakerRegistry | undefined;
  readonly executor: Executor;
}

export interface ToolingDeps {
  readonly tools: readonly Tool[];
  readonly provider: InferenceProvider;
  readonly durable: BoundRuntime | undefined;
  readonly redactor: Redactor;
  readonly contexts: ReadonlyMap<string, RunContext>;
  readonly blobs: () => BlobStore;
}

export function createTooling(settings: AgentSettings, deps: ToolingDeps): AgentTooling {
  const { tools, provider, durable, redactor, contexts } = deps;
  const { toolProfile } = settings.policy;
  const mcp =
    settings.mcpServers.length === 0
      ? undefined
      : createLiveTools(tools, settings.mcpServers, toolProfile, durable?.wrapTool, {
          sampler: mcpSampler(provider, settings.model.name ?? provider.defaultModel, contexts, redactor.text, settings.model.maxTokens),
          // A durable call cannot wait for a person: its server's questions are refused, saying why.
          elicitor: durable === undefined ? mcpElicitor(contexts) : durableElicitor(),
          // OAuth tokens are secrets like a server's headers.
          onSecret: (secret: string) => redactor.addSecret(secret),
          onRestarted: (server: string, attempts: number) => {
            for (const run of contexts.values()) run.emit({ type: 'mcp.restarted', server, attempts });
          },
        });
  const registry = mcp ?? createToolRegistry(toolProfile === undefined ? tools : applyToolProfile(tools, toolProfile));
  const { breakers: options, recovery } = settings.resilience;
  const inspect = settings.observe.inspect;
  const breakers = options === false ? undefined : createBreakerRegistry(withoutPerTool(options), options?.perTool, defined({ inspect }));
  const content = settings.context.content;
  const executor = createExecutor({
    tools: registry,
    // Tool results and errors are redacted before the machine, the model or the log sees them.
    redact: redactor.text,
    ...defined({ breakers }),
    ...settings.resilience.tools,
    ...defined({ recovery }),
    // Tool images reach a model that takes them; ones the chat formats cannot carry are named in the result's text.
    ...(settings.model.vision ? { storeImages: (images: readonly ImagePart[]) => storeSendable(images, content, deps.blobs()) } : {}),
  });
  return { mcp, registry, breakers, executor };
}

function storeSendable(images: readonly ImagePart[], limits: ContentLimits | undefined, blobs: BlobStore): { parts: ImagePart[]; unsent: string[] } {
  const sendable: ImagePart[] = [];
  const unsent: string[] = [];
  images.forEach((part, index) => {
    const why = unsendable(part, limits);
    if (why === undefined) sendable.push(part);
    else unsent.push(`image ${index + 1} of ${images.length} was not sent: ${why}`);
  });
  return { parts: storeParts(sendable, blobs) as ImagePart[], unsent };
}

function unsendable(part: ImagePart, limits: ContentLimits | undefined): string | undefined {
  try {
    checkParts([part], { vision: true, ...limits });
    return undefined;
  } catch (error) {
    const type = part.mediaType ?? 'of unknown type';
    return error instanceof ConversationError && error.problem === 'too_large' ? `${type}, over the size limit (context.content.maxImageBytes)` : `${type}, a media type the model cannot take`;
  }
}

function withoutPerTool(options: AgentSettings['resilience']['breakers']) {
  if (options === undefined || options === false) return undefined;
  const { perTool: _perTool, ...rest } = options;
  return rest;
}
