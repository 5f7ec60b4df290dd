/**
 * How an agent answers what its MCP servers ask of the client during a run's tool call. A sample
 * is one call to the agent's own model, with no tools offered, the server's text redacted like
 * any other text bound for the model, and the usage journalled and counted in the run's totals.
 * A question (elicitation) is a human turn of the run.
 */
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
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

/**
 * The elicitor of a durable (PostgreSQL) agent: it refuses every question with why. A durable
 * call is made by whichever worker claimed its step and must end within that step, while a human
 * wait is stored and answered from any process, perhaps hours later, perhaps to another worker;
 * the server's question lives on one worker's open MCP stream, so the answer could not reach it.
 *
 * @example
 * ```ts
 * const elicitor = durableElicitor(); // a server's question fails its tool call with a message saying why
 * ```
 */
export function durableElicitor(): McpElicitor {
  return (request) =>
    Promise.reject(
      new McpError(
        ErrorCode.InvalidRequest,
        `MCP server "${request.server}" asked the user "${request.message}" during a tool call of a durable (PostgreSQL) run, which cannot hold the call open while a person answers. Pass what the tool needs in its arguments, or run the agent without the durable runtime to answer such questions.`,
      ),
    );
}
