/** The list is fixed for the server's life, so the client never declares `listChanged`. */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';

export function answerRoots(client: Client, roots: readonly string[]): void {
  const listed = roots.map((uri) => ({ uri, name: basename(fileURLToPath(uri)) || uri }));
  client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: listed }));
}
