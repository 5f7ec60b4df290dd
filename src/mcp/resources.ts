/** Resource content is another party's data: the resource tools are marked untrusted like MCP tools. */
import { z } from 'zod';
import { printable, sliceChars } from '../tools/text.ts';
import type { Tool, ToolContext } from '../tools/types.ts';
import { defined } from '../core/defined.ts';

export interface McpResourceInfo {
  readonly uri: string;
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly mimeType?: string;
  readonly size?: number;
}

export interface McpResourceTemplateInfo {
  readonly uriTemplate: string;
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly mimeType?: string;
}

/** `size` is before the cut: characters of text, bytes of a blob. */
export interface McpResourceContent {
  readonly uri: string;
  readonly mimeType?: string;
  readonly text?: string;
  readonly blob?: string;
  readonly size: number;
  readonly truncated: boolean;
}

export interface McpReadOptions {
  /** Default 100 000. */
  readonly maxChars?: number;
  /** Decoded bytes. Default 5 MiB. */
  readonly maxBytes?: number;
  readonly signal?: AbortSignal;
}

export const DEFAULT_RESOURCE_MAX_CHARS = 100_000;
export const DEFAULT_RESOURCE_MAX_BYTES = 5 * 1024 * 1024;

export interface RawResourceContent {
  readonly uri: string;
  readonly mimeType?: string;
  readonly text?: string;
  readonly blob?: string;
}

export function capContent(raw: RawResourceContent, options: McpReadOptions = {}): McpResourceContent {
  const base = { uri: raw.uri, ...defined({ mimeType: raw.mimeType }) };
  if (typeof raw.blob === 'string') {
    const bytes = Buffer.from(raw.blob, 'base64');
    const max = options.maxBytes ?? DEFAULT_RESOURCE_MAX_BYTES;
    const truncated = bytes.length > max;
    return { ...base, blob: truncated ? bytes.subarray(0, max).toString('base64') : raw.blob, size: bytes.length, truncated };
  }
  const text = raw.text ?? '';
  const max = options.maxChars ?? DEFAULT_RESOURCE_MAX_CHARS;
  const kept = sliceChars(text, max);
  return { ...base, text: kept, size: text.length, truncated: kept.length < text.length };
}

const TEXTUAL = /^(text\/|application\/(json|xml|yaml|x-yaml|javascript|typescript|toml|x-sh|sql|graphql)\b|[^;]*\+(json|xml)\b)/i;

function size(bytes: number): string {
  return bytes < 1024 ? `${bytes} B` : bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} KB` : `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** Never raw base64: a non-textual blob is described by type and size. */
export function contentText(content: McpResourceContent): string {
  if (content.blob === undefined) {
    const text = content.text ?? '';
    return content.truncated ? `${text}\n[truncated: showing the first ${text.length} of ${content.size} characters of ${content.uri}]` : text;
  }
  const shownBytes = Buffer.from(content.blob, 'base64');
  const note = content.truncated ? `\n[truncated: showing the first ${size(shownBytes.length)} of ${size(content.size)} of ${content.uri}]` : '';
  if (content.mimeType !== undefined && TEXTUAL.test(content.mimeType)) return printable(shownBytes.toString('utf8')) + note;
  return `[binary resource: ${content.uri}, ${content.mimeType ?? 'unknown type'}, ${size(content.size)}]`;
}

export function readText(contents: readonly McpResourceContent[]): string {
  if (contents.length === 0) return '(the resource has no content)';
  if (contents.length === 1) return contentText(contents[0]!);
  return contents.map((content) => `[${content.uri}]\n${contentText(content)}`).join('\n\n');
}

export function listingText(resources: readonly McpResourceInfo[], templates: readonly McpResourceTemplateInfo[]): string {
  const line = (target: string, info: { name: string; title?: string; description?: string; mimeType?: string }) => {
    const description = info.description === undefined ? '' : `: ${sliceChars(info.description.replace(/\s+/g, ' ').trim(), 200)}`;
    return `- ${target} — ${info.title ?? info.name}${info.mimeType === undefined ? '' : ` (${info.mimeType})`}${description}`;
  };
  const parts: string[] = [];
  if (resources.length > 0) parts.push(['Resources:', ...resources.map((resource) => line(resource.uri, resource))].join('\n'));
  if (templates.length > 0) {
    parts.push(['Resource templates (fill in the {placeholders} to get a URI you can read):', ...templates.map((template) => line(template.uriTemplate, template))].join('\n'));
  }
  return parts.length === 0 ? 'This server lists no resources.' : parts.join('\n\n');
}

export interface ResourceAccess {
  list(signal: AbortSignal): Promise<{ resources: McpResourceInfo[]; templates: McpResourceTemplateInfo[] }>;
  read(uri: string, options: McpReadOptions): Promise<McpResourceContent[]>;
}

const readInput = z.strictObject({ uri: z.string().min(1).describe('The URI of the resource, as listed (or a filled-in template).') });
const listInput = z.strictObject({});

export function resourceTools(server: string, access: ResourceAccess, caps: McpReadOptions = {}): Tool[] {
  const permissions = Object.freeze(['mcp', `mcp:${server}`, 'mcp:read']);
  const common = { permissions, verified: false, requiresConfirmation: false, untrusted: true, idempotent: true } as const;
  const listName = `${server}__list_resources`;
  const listDescription = `List the resources (and resource templates) of MCP server "${server}": documents and data it can show you. Read one with ${server}__read_resource.`;
  const readName = `${server}__read_resource`;
  const readDescription = `Read a resource of MCP server "${server}" by its URI (from ${listName}, or a template with its placeholders filled in).`;
  const list: Tool<Record<string, never>, string> = Object.freeze({
    ...common,
    name: listName,
    description: listDescription,
    input: listInput,
    spec: Object.freeze({ name: listName, description: listDescription, parameters: z.toJSONSchema(listInput) }),
    async execute(_input: Record<string, never>, context: ToolContext) {
      const { resources, templates } = await access.list(context.signal);
      return listingText(resources, templates);
    },
  });
  const read: Tool<{ uri: string }, string> = Object.freeze({
    ...common,
    name: readName,
    description: readDescription,
    input: readInput,
    spec: Object.freeze({ name: readName, description: readDescription, parameters: z.toJSONSchema(readInput) }),
    async execute(input: { uri: string }, context: ToolContext) {
      return readText(await access.read(input.uri, { ...caps, signal: context.signal }));
    },
  });
  return [list as Tool, read as Tool];
}
