/**
 * The agent answers with its own model, never offering its tools; a request that cannot be tied
 * to one run is refused, since its cost would land on no run or the wrong one.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CreateMessageRequestSchema, ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { Message } from '../core/messages.ts';
import type { RunFor } from './attribution.ts';
import { defined } from '../core/defined.ts';
import { DEFAULTS } from '../core/defaults.ts';

export interface McpSampleRequest {
  readonly server: string;
  /** The usage is counted there. */
  readonly runId: string;
  readonly messages: readonly Message[];
  /** The server's ask, under the config's cap (`DEFAULTS.mcp.samplingMaxTokens` for `sampling: true`). */
  readonly maxTokens: number;
  readonly temperature?: number;
  readonly signal: AbortSignal;
}

export interface McpSampleResult {
  readonly text: string;
  readonly model: string;
  readonly truncated: boolean;
}

export type McpSampler = (request: McpSampleRequest) => Promise<McpSampleResult>;

export type McpSamplingConfig = boolean | { readonly maxTokens: number } | undefined;

/** The agent's model is offered text only. */
function textOf(server: string, content: unknown): string {
  const blocks = Array.isArray(content) ? content : [content];
  return blocks
    .map((block: unknown) => {
      const typed = block as { type?: unknown; text?: unknown };
      if (typed.type === 'text' && typeof typed.text === 'string') return typed.text;
      throw new McpError(ErrorCode.InvalidParams, `actorloop answers sampling requests of MCP server "${server}" with text only; send "${String(typed.type)}" content as text.`);
    })
    .join('\n');
}

export function answerSampling(client: Client, server: string, config: McpSamplingConfig, runFor: RunFor, sampler: McpSampler | undefined): void {
  client.setRequestHandler(CreateMessageRequestSchema, async (request, extra) => {
    if (config === undefined || config === false || sampler === undefined) {
      throw new McpError(
        ErrorCode.InvalidRequest,
        `Sampling is off for MCP server "${server}": the agent's model answers a server only when its config says sampling: true (or { maxTokens }).`,
      );
    }
    const run = runFor(extra.requestId);
    if (typeof run === 'number') {
      throw new McpError(
        ErrorCode.InvalidRequest,
        `MCP server "${server}" asked to sample while ${run === 0 ? 'no tool call of a run was' : `tool calls of ${run} runs were`} in flight; actorloop samples only for the run whose tool call asks, so its usage is counted there (send the request on that call's stream over streamable HTTP; over stdio only one run may have calls in flight).`,
      );
    }
    const { params } = request;
    const messages: Message[] = [];
    if (params.systemPrompt !== undefined && params.systemPrompt !== '') messages.push({ role: 'system', content: params.systemPrompt });
    for (const message of params.messages) messages.push({ role: message.role, content: textOf(server, message.content) });
    // The server's ask is never the only limit: it would spend as much of the user's model as it liked.
    const cap = typeof config === 'object' ? config.maxTokens : DEFAULTS.mcp.samplingMaxTokens;
    const answer = await sampler({
      server,
      runId: run.runId,
      messages,
      maxTokens: Math.min(params.maxTokens, cap),
      ...defined({ temperature: params.temperature }),
      // Withdrawn with the call that asked too: a server need not cancel its own request, and the model's answer would be spent on nothing.
      signal: AbortSignal.any([extra.signal, run.ended]),
    });
    return { role: 'assistant' as const, content: { type: 'text' as const, text: answer.text }, model: answer.model, stopReason: answer.truncated ? 'maxTokens' : 'endTurn' };
  });
}
