/** Form mode only; the answer is checked against the server's schema (defaults filled in) before it is sent. */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ElicitRequestSchema, ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { RunFor } from './attribution.ts';
import { reservedKeyMessage, reservedKeyPath } from '../core/reservedKeys.ts';

export interface McpElicitRequest {
  readonly server: string;
  readonly runId: string;
  readonly message: string;
  /** An object of primitive properties. */
  readonly schema: Readonly<Record<string, unknown>>;
  /** Aborted when the server gives up on the question, or the tool call that asked it ends. */
  readonly signal: AbortSignal;
}

export type McpElicitOutcome = { readonly action: 'accept'; readonly content: Record<string, unknown> } | { readonly action: 'decline' } | { readonly action: 'cancel' };

export type McpElicitor = (request: McpElicitRequest) => Promise<McpElicitOutcome>;

type Primitive = string | number | boolean | string[];

export function checkElicitAnswer(schema: Readonly<Record<string, unknown>>, answer: unknown): { content: Record<string, unknown> } | { problems: string } {
  if (answer === null || typeof answer !== 'object' || Array.isArray(answer)) return { problems: 'the answer must be a JSON object of the form\'s fields' };
  const content: Record<string, unknown> = { ...(answer as Record<string, unknown>) };
  const properties = (schema['properties'] ?? {}) as Record<string, { default?: Primitive } | undefined>;
  for (const [field, property] of Object.entries(properties)) {
    // Own fields only: a form field named like an Object member ("constructor", "toString") gets its default too.
    if (!Object.hasOwn(content, field) && property?.default !== undefined) Object.defineProperty(content, field, { value: property.default, enumerable: true, writable: true, configurable: true });
  }
  // Recorded with the run's decision: a key its log reader refuses would leave the run unreadable.
  const reserved = reservedKeyPath(content);
  if (reserved !== undefined) return { problems: `${reserved.map(String).join('.')}: ${reservedKeyMessage(reserved)}` };
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

/** Installed only with an elicitor: the SDK refuses the handler unless the client declares the capability. */
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
