/** Resources a task names, from `resources: 'context'` servers, injected like pre-hydrated references: fenced, budgeted, untrusted. */
import { UriTemplate } from '@modelcontextprotocol/sdk/shared/uriTemplate.js';
import type { Hydrator } from '../core/hooks.ts';
import { createPreHydrator } from '../hydration/index.ts';
import type { McpServer } from '../mcp/connect.ts';
import { readText } from '../mcp/resources.ts';
import { defined } from '../core/defined.ts';

const CANDIDATE = /\b[a-z][a-z0-9+.-]*:\/\/[^\s<>"'`]+/gi;
const KIND = 'mcp-resource';

const trimEnd = (uri: string): string => uri.replace(/[.,;:!?)\]}'"]+$/, '');

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/** Which server a URI belongs to: one that lists it, else one whose template it fills in. */
async function owners(servers: readonly McpServer[], task: string): Promise<Map<string, McpServer>> {
  const candidates = [...new Set([...task.matchAll(CANDIDATE)].map((match) => trimEnd(match[0])))];
  const found = new Map<string, McpServer>();
  if (candidates.length === 0) return found;
  for (const server of servers) {
    const [listed, templates] = await Promise.all([server.resources(), server.resourceTemplates()]);
    const uris = new Set(listed.map((resource) => resource.uri));
    const patterns = templates.flatMap((template) => {
      try {
        return [new UriTemplate(template.uriTemplate)];
      } catch {
        return [];
      }
    });
    for (const uri of candidates) {
      if (found.has(uri)) continue;
      if (uris.has(uri) || patterns.some((pattern) => pattern.match(uri) !== null)) found.set(uri, server);
    }
  }
  return found;
}

export interface McpContextOptions {
  readonly maxContextTokens?: number;
  readonly timeoutMs?: number;
}

/** Never fails the run: a server unreachable here fails the first model step instead, with its own error. */
export function mcpContextHydrator(connected: () => Promise<readonly McpServer[]>, names: readonly string[], options: McpContextOptions = {}): Hydrator {
  const source = `mcp:${names.join(',')}`;
  return async (input, context) => {
    let found: Map<string, McpServer>;
    try {
      const servers = (await connected()).filter((server) => names.includes(server.name));
      found = await owners(servers, input.task);
    } catch {
      // Which URIs were meant cannot be told without the servers' lists: count every candidate as failed.
      const candidates = new Set([...input.task.matchAll(CANDIDATE)].map((match) => trimEnd(match[0]))).size;
      if (candidates > 0) context.emit({ type: 'prehydration.completed', found: candidates, resolved: 0, failed: candidates, tokens: 0 });
      return { inject: [] };
    }
    if (found.size === 0) return { inject: [] };
    // Longest first, and not followed by more URI characters: `demo://a/1` must not match inside `demo://a/12`.
    const alternation = [...found.keys()].sort((a, b) => b.length - a.length).map(escape).join('|');
    const prehydrate = createPreHydrator({
      resolvers: {
        [KIND]: async (reference, { signal }) => {
          const server = found.get(reference.value);
          if (server === undefined) throw new Error(`no MCP server lists ${reference.value}`);
          return readText(await server.readResource(reference.value, { signal }));
        },
      },
      patterns: [{ kind: KIND, pattern: new RegExp(`(?:${alternation})(?![^\\s<>"'\`.,;:!?)\\]}])`, 'g') }],
      maxReferences: found.size,
      ...defined({ maxContextTokens: options.maxContextTokens, timeoutMs: options.timeoutMs }),
    });
    const result = await prehydrate(input, context);
    // Named after the servers, so a held side-effect call says where the untrusted text came from.
    return { ...result, inject: result.inject.map((message) => (message.role === 'user' ? { ...message, untrusted: source } : message)) };
  };
}
