/**
 * Roots: the `file://` URIs an agent offers its MCP servers as the places they may work in. A
 * server that asks (`roots/list`) gets them; the list is fixed for the server's life, so the
 * client never declares `listChanged`.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Answer `roots/list` on `client` with `roots`, each named after its last path segment.
 *
 * @example
 * ```ts
 * answerRoots(client, ['file:///home/me/project']); // a server's roots/list gets [{ uri, name: 'project' }]
 * ```
 */
export function answerRoots(client: Client, roots: readonly string[]): void {
  const listed = roots.map((uri) => ({ uri, name: basename(fileURLToPath(uri)) || uri }));
  client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: listed }));
}
