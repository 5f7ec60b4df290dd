/**
 * Elicitation: an MCP server asks the user for structured input during a tool call
 * (`elicitation/create`, form mode). The agent makes it a human turn of the run whose call the
 * server is serving; the answer is checked against the server's schema (its defaults filled in
 * first) before it is sent. URL mode is not offered.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ElicitRequestSchema, ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { RunFor } from './attribution.ts';

/** What a server asked the user, for the run to show. */
export interface McpElicitRequest {
  readonly server: string;
  /** The run whose tool call the server is serving. */
  readonly runId: string;
  readonly message: string;
  /** The form's JSON Schema: an object of primitive properties. */
  readonly schema: Readonly<Record<string, unknown>>;
  /** Aborted when the server gives up on the question, or the tool call that asked it ends. */
  readonly signal: AbortSignal;
}

/** How the user answered: with content, by declining, or by dismissing the question. */
export type McpElicitOutcome = { readonly action: 'accept'; readonly content: Record<string, unknown> } | { readonly action: 'decline' } | { readonly action: 'cancel' };

/** Puts a server's question to a human (an agent: the run's `awaitingHuman`). */
export type McpElicitor = (request: McpElicitRequest) => Promise<McpElicitOutcome>;

type Primitive = string | number | boolean | string[];

/**
 * Check an answer against the form a server asked for: missing fields take the schema's
 * defaults, then the whole answer must match. Returns the content to send, or what is wrong.
 *
 * @example
 * ```ts
 * checkElicitAnswer({ type: 'object', properties: { age: { type: 'integer', default: 30 } } }, {}); // { content: { age: 30 } }
 * checkElicitAnswer({ type: 'object', properties: { age: { type: 'integer' } }, required: ['age'] }, { age: 'x' }); // { problems: 'age: …' }
 * ```
 */
export function checkElicitAnswer(schema: Readonly<Record<string, unknown>>, answer: unknown): { content: Record<string, unknown> } | { problems: string } {
  if (answer === null || typeof answer !== 'object' || Array.isArray(answer)) return { problems: 'the answer must be a JSON object of the form\'s fields' };
  const content: Record<string, unknown> = { ...(answer as Record<string, unknown>) };
  const properties = (schema['properties'] ?? {}) as Record<string, { default?: Primitive } | undefined>;
  for (const [field, property] of Object.entries(properties)) {
    if (!(field in content) && property?.default !== undefined) content[field] = property.default;
  }
  let check: z.ZodType;
  try {
    check = z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]);
  } catch {
    // A form zod cannot read is checked as an object only; the server checks it again.
    check = z.record(z.string(), z.unknown());
  }
  const parsed = check.safeParse(content);
  if (parsed.success) return { content };
  return { problems: parsed.error.issues.map((issue) => `${issue.path.join('.') || '(answer)'}: ${issue.message}`).join('; ') };
}

/**
 * Answer `elicitation/create` on `client` through `elicitor`; refused with an MCP error when it
 * cannot be tied to one run's call, or in URL mode. (Installed only with an elicitor: the SDK
 * refuses the handler unless the client declares the capability.)
 *
 * @example
 * ```ts
 * answerElicitation(client, 'people', () => ({ runId: 'run-1', ended }), (request) => askTheUser(request));
 * ```
 */
export function answerElicitation(client: Client, server: string, runFor: RunFor, elicitor: McpElicitor): void {
  client.setRequestHandler(ElicitRequestSchema, async (request, extra) => {
    const { params } = request;
    if (params.mode === 'url') throw new McpError(ErrorCode.InvalidParams, 'actorloop answers form-mode elicitation only.');
    const run = runFor(extra.requestId);
    if (typeof run === 'number') {
      throw new McpError(
        ErrorCode.InvalidRequest,
        `MCP server "${server}" asked the user while ${run === 0 ? 'no tool call of a run was' : `tool calls of ${run} runs were`} in flight; actorloop asks only for the run whose tool call asks (send the request on that call's stream over streamable HTTP; over stdio only one run may have calls in flight).`,
      );
    }
    // Withdrawn when the server gives up on it, or when the call that asked ends without the answer (a timeout).
    const signal = AbortSignal.any([extra.signal, run.ended]);
    return elicitor({ server, runId: run.runId, message: params.message, schema: params.requestedSchema as Record<string, unknown>, signal });
  });
}
