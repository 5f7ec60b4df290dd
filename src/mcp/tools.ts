/**
 * MCP tools as actorloop tools: named `<server>_<tool>`, arguments checked against the tool's
 * JSON Schema before the call (a failure goes back to the model like any other), annotations
 * mapped to what gates and the executor read, results turned into text for the conversation.
 */
import { z } from 'zod';
import { ConfigurationError } from '../core/errors.ts';
import type { Tool, ToolContext } from '../tools/types.ts';
import type { ImagePart } from '../core/messages.ts';
import { McpError } from './errors.ts';

/** A tool as an MCP server lists it (the fields actorloop reads). */
export interface McpToolInfo {
  readonly name: string;
  readonly description?: string;
  readonly inputSchema: Readonly<Record<string, unknown>>;
  readonly annotations?: {
    readonly readOnlyHint?: boolean;
    readonly destructiveHint?: boolean;
    readonly idempotentHint?: boolean;
  };
}

/** One content block of a call result (the fields actorloop reads). */
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

/** Calls a tool on its server for a run; the signal is sent on as MCP cancellation. */
export type McpCall = (tool: string, args: Record<string, unknown>, signal: AbortSignal, runId: string) => Promise<McpCallResult>;

const MAX_NAME = 64;

/**
 * `<server>_<tool>`, with characters outside `[A-Za-z0-9_-]` replaced by `_` and cut to 64.
 *
 * @example
 * ```ts
 * mcpToolName('everything', 'echo'); // 'everything_echo'
 * ```
 */
export function mcpToolName(server: string, tool: string): string {
  return `${server}_${tool}`.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, MAX_NAME);
}

/** Decoded size of base64 data, for summaries. */
function base64Bytes(data: string): number {
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}

function size(bytes: number): string {
  return bytes < 1024 ? `${bytes} B` : bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} KB` : `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** One block as text: text as is, binary summarised by type and size (never raw base64). */
function describeContent(block: McpContent): string {
  switch (block.type) {
    case 'text':
      return block.text ?? '';
    case 'image':
    case 'audio':
      return `[${block.type}: ${block.mimeType ?? 'unknown type'}, ${size(base64Bytes(block.data ?? ''))}]`;
    case 'resource': {
      const r = block.resource ?? {};
      const amount = r.text !== undefined ? `${r.text.length} characters` : size(base64Bytes(r.blob ?? ''));
      return `[resource: ${r.uri ?? 'no uri'}, ${r.mimeType ?? 'unknown type'}, ${amount}]`;
    }
    case 'resource_link':
      return `[resource link: ${block.uri ?? 'no uri'}${block.name === undefined ? '' : ` (${block.name})`}]`;
    default:
      return `[${block.type} content]`;
  }
}

/**
 * A call result as the text the model sees: text blocks joined, other blocks summarised; the
 * structured content when there is no text.
 *
 * @example
 * ```ts
 * resultText({ content: [{ type: 'text', text: 'hi' }, { type: 'image', data: 'AAAA', mimeType: 'image/png' }] });
 * // 'hi\n[image: image/png, 3 B]'
 * ```
 */
export function resultText(result: McpCallResult): string {
  const blocks = (result.content ?? []).map(describeContent).filter((text) => text !== '');
  if (blocks.length === 0 && result.structuredContent !== undefined) return JSON.stringify(result.structuredContent);
  return blocks.join('\n');
}

/**
 * The image blocks of a call result as image parts (base64 bytes with their media type).
 *
 * @example
 * ```ts
 * resultImages({ content: [{ type: 'image', data: 'iVBO…', mimeType: 'image/png' }] }); // [{ type: 'image', data: 'iVBO…', mediaType: 'image/png' }]
 * ```
 */
export function resultImages(result: McpCallResult): ImagePart[] {
  const images: ImagePart[] = [];
  for (const block of result.content ?? []) {
    if (block.type === 'image' && typeof block.data === 'string' && block.data !== '' && typeof block.mimeType === 'string') {
      images.push({ type: 'image', data: block.data, mediaType: block.mimeType });
    }
  }
  return images;
}

/** The tool's input schema as zod; a schema zod cannot read is checked as an object only (the server checks it again). */
function inputOf(schema: Readonly<Record<string, unknown>>): z.ZodType<Record<string, unknown>> {
  try {
    return z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]) as z.ZodType<Record<string, unknown>>;
  } catch {
    return z.record(z.string(), z.unknown());
  }
}

/**
 * Permissions a gate can match: every MCP tool has `mcp` and `mcp:<server>`; annotations add
 * `mcp:read` (read-only) or `mcp:destructive`.
 */
function permissionsOf(server: string, info: McpToolInfo): string[] {
  const hints = info.annotations ?? {};
  return ['mcp', `mcp:${server}`, ...(hints.readOnlyHint === true ? ['mcp:read'] : []), ...(hints.destructiveHint === true ? ['mcp:destructive'] : [])];
}

/**
 * The actorloop tool for one MCP tool.
 *
 * @example
 * ```ts
 * const tool = mcpTool('everything', { name: 'echo', inputSchema }, (name, args, signal) => client.callTool(...));
 * tool.name; // 'everything_echo'
 * ```
 */
export function mcpTool(server: string, info: McpToolInfo, call: McpCall): Tool<Record<string, unknown>, string> {
  const name = mcpToolName(server, info.name);
  const description = (info.description ?? '').trim() || `Tool "${info.name}" of MCP server "${server}".`;
  const hints = info.annotations ?? {};
  return Object.freeze({
    name,
    description,
    input: inputOf(info.inputSchema),
    spec: Object.freeze({ name, description, parameters: info.inputSchema }),
    permissions: Object.freeze(permissionsOf(server, info)),
    verified: false,
    requiresConfirmation: false,
    // Another party's server: its answers are data, not the user's instructions.
    untrusted: true,
    // MCP's default is "not idempotent"; a read-only tool is safe to run again.
    idempotent: hints.idempotentHint === true || hints.readOnlyHint === true,
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

/**
 * The actorloop tools of one server; two MCP tools that map to one name are a configuration error.
 *
 * @example
 * ```ts
 * const tools = mcpTools('everything', listed, call);
 * ```
 */
export function mcpTools(server: string, listed: readonly McpToolInfo[], call: McpCall): Tool[] {
  const seen = new Map<string, string>();
  return listed.map((info) => {
    const tool = mcpTool(server, info, call);
    const earlier = seen.get(tool.name);
    if (earlier !== undefined) {
      throw new ConfigurationError(`MCP server "${server}" has tools "${earlier}" and "${info.name}", which both become "${tool.name}". Rename one on the server, or use a shorter server name.`);
    }
    seen.set(tool.name, info.name);
    return tool as Tool;
  });
}
