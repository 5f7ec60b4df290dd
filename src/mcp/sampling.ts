/**
 * Sampling: an MCP server asks the client's model for a completion (`sampling/createMessage`).
 * Off unless the server's config says `sampling: true` (or `{ maxTokens }`, a cap on what one
 * request may ask for). The agent answers with its own model, never offering its tools, and
 * counts the usage against the run whose tool call the server is serving; a request that cannot
 * be tied to one run is refused, since its cost would land on no run or the wrong one.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CreateMessageRequestSchema, ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { Message } from '../core/messages.ts';
import type { RunFor } from './attribution.ts';

/** What a server asked the model, as the agent's model takes it. */
export interface McpSampleRequest {
  /** The server that asked. */
  readonly server: string;
  /** The run whose tool call the server is serving: the usage is counted there. */
  readonly runId: string;
  /** The server's system prompt (if any) first, then its messages. */
  readonly messages: readonly Message[];
  /** What the server asked for, under the config's cap. */
  readonly maxTokens: number;
  readonly temperature?: number;
  readonly signal: AbortSignal;
}

/** The model's answer to a sample request. */
export interface McpSampleResult {
  readonly text: string;
  readonly model: string;
  readonly truncated: boolean;
}

/** Answers a server's sample request with the agent's model (see `createAgent`). */
export type McpSampler = (request: McpSampleRequest) => Promise<McpSampleResult>;

/** A server's sampling config: off, on, or on with a cap on each request's output tokens. */
export type McpSamplingConfig = boolean | { readonly maxTokens: number } | undefined;

/** The content of one sampling message as text; anything but text is refused (the agent's model is offered text only). */
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

/**
 * Answer `sampling/createMessage` on `client`: refused with an MCP error saying how to allow it
 * while `config` is off, or when it cannot be tied to one run's call on the server.
 *
 * @example
 * ```ts
 * answerSampling(client, 'notes', { maxTokens: 200 }, () => ({ runId: 'run-1', ended }), sampler);
 * ```
 */
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
    const cap = typeof config === 'object' ? config.maxTokens : params.maxTokens;
    const answer = await sampler({
      server,
      runId: run.runId,
      messages,
      maxTokens: Math.min(params.maxTokens, cap),
      ...(params.temperature === undefined ? {} : { temperature: params.temperature }),
      signal: extra.signal,
    });
    return { role: 'assistant' as const, content: { type: 'text' as const, text: answer.text }, model: answer.model, stopReason: answer.truncated ? 'maxTokens' : 'endTurn' };
  });
}
