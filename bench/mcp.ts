/**
 * Scenario 3c: one tool call through a stdio MCP server (server-everything's `echo`, as the
 * agent's executor calls it) against the same echo as a local tool, in interleaved rounds.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { connectMcpServer } from '../src/mcp/connect.ts';
import { defineTool } from '../src/tools/defineTool.ts';
import type { Tool, ToolContext } from '../src/tools/types.ts';
import { summarize, type Summary } from './stats.ts';

export interface McpCallResult {
  readonly localUs: Summary;
  readonly mcpUs: Summary;
}

const require = createRequire(import.meta.url);
const everything = join(dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')), 'dist/index.js');

async function timeCalls(tool: Tool, calls: number, into: number[]): Promise<void> {
  for (let i = 0; i < calls; i++) {
    const started = performance.now();
    // A signal per call, as the executor gives each call its own.
    const context: ToolContext = { signal: new AbortController().signal, toolCallId: `c${i}`, idempotencyKey: `r:c${i}`, runId: 'r', agentId: 'bench' };
    const out = await tool.execute({ message: `call ${i}` }, context);
    into.push((performance.now() - started) * 1000);
    if (out !== `Echo: call ${i}`) throw new Error(`mcp bench: ${tool.name} answered ${JSON.stringify(out)}`);
  }
}

/**
 * @example
 * ```ts
 * const r = await measureMcpCall({ rounds: 10, callsPerRound: 50 });
 * r.mcpUs.median / r.localUs.median;
 * ```
 */
export async function measureMcpCall(options: { readonly rounds: number; readonly callsPerRound: number }): Promise<McpCallResult> {
  const local = defineTool({ name: 'echo', description: 'Echo', input: z.object({ message: z.string() }), execute: ({ message }) => `Echo: ${message}` }) as Tool;
  const server = await connectMcpServer({ name: 'everything', command: process.execPath, args: [everything, 'stdio'] });
  try {
    const remote = (await server.tools()).find((tool) => tool.name === 'everything_echo');
    if (remote === undefined) throw new Error('mcp bench: server-everything has no echo tool');
    await timeCalls(remote, options.callsPerRound, []);
    const localUs: number[] = [];
    const mcpUs: number[] = [];
    for (let round = 0; round < options.rounds; round++) {
      // Alternate which goes first, so neither always runs on a warmer process.
      const order: [Tool, number[]][] = round % 2 === 0 ? [[local, localUs], [remote, mcpUs]] : [[remote, mcpUs], [local, localUs]];
      for (const [tool, into] of order) await timeCalls(tool, options.callsPerRound, into);
    }
    return { localUs: summarize(localUs), mcpUs: summarize(mcpUs) };
  } finally {
    await server.close();
  }
}
