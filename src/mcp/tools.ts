/** Arguments are checked against the tool's JSON Schema before the call, so a failure goes back to the model like any other. */
import { z } from 'zod';
import { ConfigurationError } from '../core/errors.ts';
import type { Tool, ToolContext } from '../tools/types.ts';
import type { ImagePart } from '../core/messages.ts';
import { McpError } from './errors.ts';

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

/** MCP's defaults for missing hints: not read-only, and destructive unless the tool says it only adds. */
function permissionsOf(server: string, info: McpToolInfo): string[] {
  const hints = info.annotations ?? {};
  if (hints.readOnlyHint === true) return ['mcp', `mcp:${server}`, 'mcp:read'];
  return ['mcp', `mcp:${server}`, ...(hints.destructiveHint === false ? [] : ['mcp:destructive'])];
}

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
