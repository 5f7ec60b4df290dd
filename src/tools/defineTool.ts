import { z } from 'zod';
import { ConfigurationError } from '../core/errors.ts';
import type { RecoveryStrategy } from '../resilience/recovery.ts';
import type { Tool, ToolContext } from './types.ts';
import { defined } from '../core/defined.ts';

/** OpenAI's rule for function names; other providers accept a superset. */
export const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

export interface ToolDefinition<TSchema extends z.ZodType, TOutput> {
  readonly name: string;
  /** The model reads this. `[verified]` marks the tool verified. */
  readonly description: string;
  /** Tools take named arguments, so its JSON Schema must be an object. */
  readonly input: TSchema;
  readonly execute: (input: z.infer<TSchema>, context: ToolContext) => TOutput | Promise<TOutput>;
  readonly permissions?: readonly string[];
  readonly verified?: boolean;
  readonly requiresConfirmation?: boolean;
  /** Default true. A non-idempotent tool is not re-run after a crash; the run waits for a human. */
  readonly idempotent?: boolean;
  readonly timeoutMs?: number;
  readonly recovery?: RecoveryStrategy;
  /** Its results come from outside the user's trust: fenced as data, and they taint the run. */
  readonly untrusted?: boolean;
  /** It changes something outside the agent; a tainted run then needs approval to call it. */
  readonly sideEffects?: boolean;
}

function fail(name: unknown, problem: string): never {
  const label = typeof name === 'string' ? `Tool ${JSON.stringify(name.slice(0, 80))}` : 'A tool definition';
  throw new ConfigurationError(`${label}: ${problem}`);
}

function isZodSchema(value: unknown): value is z.ZodType {
  return (
    typeof value === 'object' &&
    value !== null &&
    '_zod' in value &&
    typeof (value as { safeParse?: unknown }).safeParse === 'function'
  );
}

/**
 * Extra keys are malformed arguments, so a plain `z.object` (which would strip them silently) is
 * made strict. `.loose()` / `.catchall()` keep their explicit choice; nested objects keep theirs.
 */
function strictVariant(input: z.ZodType): z.ZodType {
  if (input instanceof z.ZodObject && input._zod.def.catchall === undefined) return input.strict();
  if (input instanceof z.ZodPipe) {
    const start = input._zod.def.in;
    if (start instanceof z.ZodObject && start._zod.def.catchall === undefined) {
      return z.core.clone(input, { ...input._zod.def, in: start.strict() });
    }
  }
  return input;
}

function parametersSchema(name: string, input: z.ZodType, tightened: boolean): Record<string, unknown> {
  let schema: Record<string, unknown>;
  try {
    // `io: 'input'`: the model writes the input side, so fields with defaults are optional.
    // From the original schema, so `.describe()`/`.meta()` registered on it are kept.
    schema = z.toJSONSchema(input, { io: 'input' }) as Record<string, unknown>;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    fail(name, `its input schema cannot be expressed as JSON Schema (${reason}). Use JSON types the model can write: z.iso.datetime() instead of z.date(), z.string() or z.number() instead of z.bigint().`);
  }
  if (schema.type !== 'object') {
    const got = typeof schema.type === 'string' ? `JSON type "${schema.type}"` : 'a union or other non-object schema';
    fail(name, `input must be an object schema because tools take named arguments, but it is ${got}. Wrap it: z.object({ value: yourSchema }).`);
  }
  const { $schema: _dropped, ...parameters } = schema;
  return {
    ...parameters,
    properties: parameters.properties ?? {},
    required: parameters.required ?? [],
    ...(tightened ? { additionalProperties: false } : {}),
  };
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const item of Object.values(value)) deepFreeze(item);
  }
  return value;
}

function validate<TSchema extends z.ZodType, TOutput>(definition: ToolDefinition<TSchema, TOutput>): void {
  if (typeof definition !== 'object' || definition === null) fail(undefined, 'defineTool needs an object { name, description, input, execute }.');
  const { name, description, input, execute, permissions, timeoutMs } = definition;
  if (typeof name !== 'string' || !TOOL_NAME_PATTERN.test(name)) {
    fail(name, 'the name must be 1–64 characters from a-z, A-Z, 0-9, "_" and "-" (the OpenAI rule), e.g. "search_web".');
  }
  if (typeof description !== 'string' || description.trim() === '') {
    fail(name, 'the description is empty; say what the tool does and when to use it — the model chooses tools by it.');
  }
  if (!isZodSchema(input)) fail(name, 'input must be a zod schema, e.g. z.object({ query: z.string() }).');
  if (typeof execute !== 'function') fail(name, 'execute must be a function (input, context) => result.');
  if (permissions !== undefined && (!Array.isArray(permissions) || !permissions.every((p) => typeof p === 'string' && p !== ''))) {
    fail(name, 'permissions must be an array of non-empty strings such as ["fs.read"].');
  }
  if (timeoutMs !== undefined && !(Number.isFinite(timeoutMs) && timeoutMs > 0)) {
    fail(name, `timeoutMs must be a positive number of milliseconds (got ${String(timeoutMs)}).`);
  }
}

/**
 * Declare a tool; the JSON Schema is computed and checked once, and unknown keys are rejected.
 *
 * @example
 * ```ts
 * const add = defineTool({ name: 'add', description: 'Add two numbers', input: z.object({ a: z.number(), b: z.number() }), execute: ({ a, b }) => a + b });
 * ```
 */
export function defineTool<TSchema extends z.ZodType, TOutput>(
  definition: ToolDefinition<TSchema, TOutput>,
): Tool<z.infer<TSchema>, TOutput> {
  validate(definition);
  const { name, description, input, execute } = definition;
  const strict = strictVariant(input);
  const parameters = parametersSchema(name, input, strict !== input);
  return Object.freeze({
    name,
    description,
    input: strict as z.ZodType<z.infer<TSchema>>,
    spec: deepFreeze({ name, description, parameters }),
    execute,
    permissions: Object.freeze([...(definition.permissions ?? [])]),
    verified: definition.verified === true || description.includes('[verified]'),
    requiresConfirmation: definition.requiresConfirmation === true,
    idempotent: definition.idempotent !== false,
    ...defined({ timeoutMs: definition.timeoutMs, recovery: definition.recovery }),
    ...(definition.untrusted === true ? { untrusted: true } : {}),
    ...(definition.sideEffects === true ? { sideEffects: true } : {}),
  });
}
