/**
 * How an agent answers its MCP servers' sampling requests: one call to its own model, with no
 * tools offered, the server's text redacted like any other text bound for the model, and the
 * usage journalled and counted in the totals of the run the server was serving.
 */
import type { InferenceProvider } from '../core/provider.ts';
import type { McpSampler } from '../mcp/sampling.ts';
import type { RunContext } from '../run/context.ts';

/**
 * @example
 * ```ts
 * const sampler = mcpSampler(provider, 'gpt-4o-mini', runs, redactor.text);
 * ```
 */
export function mcpSampler(provider: InferenceProvider, model: string, runs: ReadonlyMap<string, RunContext>, redact: (text: string) => string): McpSampler {
  return async (request) => {
    const completion = await provider.complete({
      messages: request.messages.map((message) => ({ ...message, content: redact(typeof message.content === 'string' ? message.content : '') })) as typeof request.messages,
      model,
      maxTokens: request.maxTokens,
      ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
      signal: request.signal,
    });
    // The run may have ended while the model answered: the server still gets its answer.
    runs.get(request.runId)?.spent(request.server, model, completion.usage, completion.costUsd ?? 0);
    return { text: completion.text ?? '', model, truncated: completion.finishReason === 'length' };
  };
}
