/**
 * Shared by the MCP tests: real servers from npm (server-everything, server-filesystem) and the
 * controllable fixture server, how to start them, and what a run showed the model.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { createServer, type AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CompletionRequest } from '../../src/core/provider.ts';
import type { McpServerConfig } from '../../src/mcp/connect.ts';

const require = createRequire(import.meta.url);
const serverJs = (pkg: string): string => join(dirname(require.resolve(`${pkg}/package.json`)), 'dist/index.js');

export const everythingJs = serverJs('@modelcontextprotocol/server-everything');
export const filesystemJs = serverJs('@modelcontextprotocol/server-filesystem');
export const controlledTs = fileURLToPath(new URL('./fixtures/controlledServer.ts', import.meta.url));

export const everythingStdio: McpServerConfig = { name: 'everything', command: process.execPath, args: [everythingJs, 'stdio'] };

/** The fixture server; `mode` makes it crash or print garbage. Connected within the product's default time: compiled by tsx as it starts, it can take over 10 s on a loaded machine. */
export function controlled(name: string, mode?: 'crash' | 'garbage', env?: Record<string, string>): McpServerConfig {
  return { name, command: process.execPath, args: ['--import', 'tsx', controlledTs, ...(mode === undefined ? [] : [mode])], ...(env === undefined ? {} : { env }) };
}

const FENCE = /^\[UNTRUSTED CONTENT from [^\]]+\]\n([\s\S]*)\n\[END UNTRUSTED CONTENT\]$/;

/** The tool messages a request carried, by tool name, with the untrusted-content fence taken off. */
export function toolResults(request: CompletionRequest | undefined): { name: string; content: string }[] {
  return (request?.messages ?? [])
    .filter((m) => m.role === 'tool')
    .map((m) => ({ name: (m as { name: string }).name, content: FENCE.exec(String(m.content))?.[1] ?? String(m.content) }));
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/** server-everything in its streamable HTTP (or legacy SSE) mode on a free port, ready to take connections. */
export async function everythingOverHttp(mode: 'streamableHttp' | 'sse' = 'streamableHttp'): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(process.execPath, [everythingJs, mode], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    let seen = '';
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      seen += chunk;
      if (seen.includes('listening on port') || seen.includes('running on port')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`server-everything exited with ${String(code)} before listening: ${seen}`)));
  });
  return { url: `http://127.0.0.1:${port}/${mode === 'sse' ? 'sse' : 'mcp'}`, child };
}

/** Polls on the event loop until `done()` holds or `attempts` run out (no wall-clock margin). */
export async function until(done: () => boolean, attempts = 20_000): Promise<boolean> {
  for (let i = 0; i < attempts && !done(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
  return done();
}
