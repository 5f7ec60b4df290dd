/**
 * How an agent answers what its MCP servers ask of the client during a run's tool call. A sample
 * is one call to the agent's own model, with no tools offered, the server's text redacted like
 * any other text bound for the model, and the usage journalled and counted in the run's totals.
 * A question (elicitation) is a human turn of the run.
 */
import type { InferenceProvider } from '../core/provider.ts';
import type { McpElicitor } from '../mcp/elicitation.ts';
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

/**
 * @example
 * ```ts
 * const elicitor = mcpElicitor(runs); // a server's question waits for run.approve(undefined, { answer }) or run.reject()
 * ```
 */
export function mcpElicitor(runs: ReadonlyMap<string, RunContext>): McpElicitor {
  return async (request) => {
    const run = runs.get(request.runId);
    // The run ended between the call and the question: nobody is left to answer.
    if (run === undefined) return { action: 'cancel' };
    return run.ask({ server: request.server, message: request.message, schema: request.schema, signal: request.signal });
  };
}
