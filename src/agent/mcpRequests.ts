import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { InferenceProvider } from '../core/provider.ts';
import type { McpElicitor } from '../mcp/elicitation.ts';
import type { McpSampler } from '../mcp/sampling.ts';
import type { RunContext } from '../run/context.ts';
import { defined } from '../core/defined.ts';

/**
 * A server's sample: one call to the agent's own model, no tools, its text redacted, its usage counted in the run,
 * and never longer than the agent's own replies may be (`modelMaxTokens`).
 */
export function mcpSampler(provider: InferenceProvider, model: string, runs: ReadonlyMap<string, RunContext>, redact: (text: string) => string, modelMaxTokens?: number): McpSampler {
  return async (request) => {
    const completion = await provider.complete({
      messages: request.messages.map((message) => ({ ...message, content: redact(typeof message.content === 'string' ? message.content : '') })) as typeof request.messages,
      model,
      maxTokens: modelMaxTokens === undefined ? request.maxTokens : Math.min(request.maxTokens, modelMaxTokens),
      ...defined({ temperature: request.temperature }),
      signal: request.signal,
    });
    // The run may have ended while the model answered: the server still gets its answer.
    runs.get(request.runId)?.spent(request.server, model, completion.usage, completion.costUsd ?? 0);
    return { text: completion.text ?? '', model, truncated: completion.finishReason === 'length' };
  };
}

/** A server's question is a human turn of the run. */
export function mcpElicitor(runs: ReadonlyMap<string, RunContext>): McpElicitor {
  return async (request) => {
    const run = runs.get(request.runId);
    // The run ended between the call and the question: nobody is left to answer.
    if (run === undefined) return { action: 'cancel' };
    return run.ask({ server: request.server, message: request.message, schema: request.schema, signal: request.signal });
  };
}

/** A durable call must end within one worker's step, so a question that waits for a human is refused, saying why. */
export function durableElicitor(): McpElicitor {
  return (request) =>
    Promise.reject(
      new McpError(
        ErrorCode.InvalidRequest,
        `MCP server "${request.server}" asked the user "${request.message}" during a tool call of a durable (PostgreSQL) run, which cannot hold the call open while a person answers. Pass what the tool needs in its arguments, or run the agent without the durable runtime to answer such questions.`,
      ),
    );
}
