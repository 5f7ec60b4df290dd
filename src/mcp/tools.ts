/** Arguments are checked against the tool's JSON Schema before the call, so a failure goes back to the model like any other. */
import { z } from 'zod';
import { ConfigurationError } from '../core/errors.ts';
import { globToRegExp } from '../policy/glob.ts';
import type { Tool, ToolContext } from '../tools/types.ts';
import type { ImagePart } from '../core/messages.ts';
import { McpError } from './errors.ts';
import { capContent, contentText } from './resources.ts';
import { defined } from '../core/defined.ts';

export interface McpToolInfo {
  readonly name: string;
  readonly description?: string;
  readonly inputSchema: Readonly<Record<string, unknown>>;
  /** The server's word only: read as `unknown`, since nothing but the user's trust makes it so. */
  readonly annotations?: {
    readonly readOnlyHint?: unknown;
    readonly destructiveHint?: unknown;
    readonly idempotentHint?: unknown;
    readonly openWorldHint?: unknown;
  };
}

/** What the user vouches for about a server's tools, from its config; globs match the server's own tool names. */
export interface McpToolTrust {
  /** Believe the server's annotations (absent ones still mean MCP's defaults). */
  readonly trustAnnotations?: boolean;
  readonly readOnlyTools?: readonly string[];
  readonly idempotentTools?: readonly string[];
}

export interface McpContent {
  readonly type: string;
  readonly text?: string;
  readonly data?: string;
  readonly mimeType?: string;
  readonly uri?: string;
  readonly name?: string;
  readonly resource?: { readonly uri?: string; readonly mimeType?: string; readonly text?: string; readonly blob?: string };
}

export interface McpCallResult {
  readonly content?: readonly McpContent[];
  readonly structuredContent?: unknown;
  readonly isError?: boolean;
}

/** The signal is sent on as MCP cancellation. */
export type McpCall = (tool: string, args: Record<string, unknown>, signal: AbortSignal, runId: string) => Promise<McpCallResult>;

const MAX_NAME = 64;

export function mcpToolName(server: string, tool: string): string {
  return `${server}_${tool}`.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, MAX_NAME);
}

function base64Bytes(data: string): number {
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}

function size(bytes: number): string {
  return bytes < 1024 ? `${bytes} B` : bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} KB` : `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

function describeContent(block: McpContent): string {
  switch (block.type) {
    case 'text':
      return block.text ?? '';
    case 'image':
    case 'audio':
      return `[${block.type}: ${block.mimeType ?? 'unknown type'}, ${size(base64Bytes(block.data ?? ''))}]`;
    case 'resource': {
      // The resource is the result's data, so the model reads it (cut like a resource read); the executor fences the whole result.
      const r = block.resource ?? {};
      const uri = r.uri ?? 'without uri';
      const raw = { uri, ...defined({ mimeType: r.mimeType }), ...(r.blob === undefined ? { text: r.text ?? '' } : { blob: r.blob }) };
      return `[resource ${uri}]\n${contentText(capContent(raw))}`;
    }
    case 'resource_link':
      return `[resource link: ${block.uri ?? 'no uri'}${block.name === undefined ? '' : ` (${block.name})`}]`;
    default:
      return `[${block.type} content]`;
  }
}

export function resultText(result: McpCallResult): string {
  const blocks = (result.content ?? []).map(describeContent).filter((text) => text !== '');
  if (blocks.length === 0 && result.structuredContent !== undefined) return JSON.stringify(result.structuredContent);
  return blocks.join('\n');
}

export function resultImages(result: McpCallResult): ImagePart[] {
  const images: ImagePart[] = [];
  for (const block of result.content ?? []) {
    if (block.type === 'image' && typeof block.data === 'string' && block.data !== '' && typeof block.mimeType === 'string') {
      images.push({ type: 'image', data: block.data, mediaType: block.mimeType });
    }
    const embedded = block.type === 'resource' ? block.resource : undefined;
    if (typeof embedded?.blob === 'string' && embedded.blob !== '' && typeof embedded.mimeType === 'string' && embedded.mimeType.startsWith('image/')) {
      images.push({ type: 'image', data: embedded.blob, mediaType: embedded.mimeType });
    }
  }
  return images;
}

/** A schema zod cannot read is checked as an object only; the server checks it again. */
function inputOf(schema: Readonly<Record<string, unknown>>): z.ZodType<Record<string, unknown>> {
  try {
    return z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]) as z.ZodType<Record<string, unknown>>;
  } catch {
    return z.record(z.string(), z.unknown());
  }
}

interface Behaviour {
  readonly readOnly: boolean;
  readonly destructive: boolean;
  readonly idempotent: boolean;
  readonly openWorld: boolean;
}

/**
 * MCP's meaning of absent hints is the least trusting one (may change and destroy things, not safe to
 * repeat, reaches outside), so a hint can only add trust: it counts only when the user trusts the server.
 */
function behaviourOf(info: McpToolInfo, trust: McpToolTrust): Behaviour {
  const hints = trust.trustAnnotations === true ? (info.annotations ?? {}) : {};
  const vouched = (globs: readonly string[] | undefined): boolean => (globs ?? []).some((glob) => globToRegExp(glob).test(info.name));
  const readOnly = hints.readOnlyHint === true || vouched(trust.readOnlyTools);
  return {
    readOnly,
    destructive: !readOnly && hints.destructiveHint !== false,
    idempotent: readOnly || hints.idempotentHint === true || vouched(trust.idempotentTools),
    openWorld: hints.openWorldHint !== false,
  };
}

function permissionsOf(server: string, behaviour: Behaviour): string[] {
  return [
    'mcp',
    `mcp:${server}`,
    ...(behaviour.readOnly ? ['mcp:read'] : []),
    ...(behaviour.destructive ? ['mcp:destructive'] : []),
    ...(behaviour.openWorld ? ['mcp:open-world'] : []),
  ];
}

export function mcpTool(server: string, info: McpToolInfo, call: McpCall, trust: McpToolTrust = {}): Tool<Record<string, unknown>, string> {
  const name = mcpToolName(server, info.name);
  const description = (info.description ?? '').trim() || `Tool "${info.name}" of MCP server "${server}".`;
  const behaviour = behaviourOf(info, trust);
  return Object.freeze({
    name,
    description,
    input: inputOf(info.inputSchema),
    spec: Object.freeze({ name, description, parameters: info.inputSchema }),
    permissions: Object.freeze(permissionsOf(server, behaviour)),
    verified: false,
    requiresConfirmation: false,
    // Another party's server: its answers are data, not the user's instructions.
    untrusted: true,
    // A tainted run holds it for a human, and an interrupted call is not made again on resume, unless trusted.
    ...(behaviour.readOnly ? {} : { sideEffects: true }),
    idempotent: behaviour.idempotent,
    async execute(input: Record<string, unknown>, context: ToolContext): Promise<string> {
      const result = await call(info.name, input, context.signal, context.runId);
      const text = resultText(result);
      if (result.isError === true) throw McpError.toolError(server, info.name, text);
      // The text still describes each image: a model that does not take them sees that much.
      const images = resultImages(result);
      if (images.length > 0) context.attachImages?.(images);
      return text;
    },
  });
}

export function mcpTools(server: string, listed: readonly McpToolInfo[], call: McpCall, trust: McpToolTrust = {}): Tool[] {
  const seen = new Map<string, string>();
  return listed.map((info) => {
    const tool = mcpTool(server, info, call, trust);
    const earlier = seen.get(tool.name);
    if (earlier !== undefined) {
      throw new ConfigurationError(`MCP server "${server}" has tools "${earlier}" and "${info.name}", which both become "${tool.name}". Rename one on the server, or use a shorter server name.`);
    }
    seen.set(tool.name, info.name);
    return tool as Tool;
  });
}
