import { z } from 'zod';
import type { ResponseFormatJSONSchema } from 'openai/resources/shared';
import { ConfigurationError, describeError } from '../core/errors.ts';
import { StructuredOutputError } from './errors.ts';
import type { StructuredOutputSpec } from '../core/provider.ts';
import { strictRequired, withoutRefusedNulls } from './strictSchema.ts';
import { mayNameReservedKey, reservedKeyMessage, reservedKeyPath } from '../core/reservedKeys.ts';

/** Converting is not free and the same schema is sent every turn. */
const jsonSchemas = new WeakMap<object, Record<string, unknown>>();

/** Strict mode, so servers that enforce schemas constrain decoding; optional fields go out required and nullable, as it demands. */
export function responseFormatFor(spec: StructuredOutputSpec<unknown>): ResponseFormatJSONSchema {
  return {
    type: 'json_schema',
    json_schema: {
      // OpenAI accepts only [a-zA-Z0-9_-]{1,64} here.
      name: spec.name.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64) || 'output',
      ...(spec.description === undefined ? {} : { description: spec.description }),
      schema: jsonSchemaOf(spec),
      strict: true,
    },
  };
}

function jsonSchemaOf(spec: StructuredOutputSpec<unknown>): Record<string, unknown> {
  const cached = jsonSchemas.get(spec.schema);
  if (cached !== undefined) return cached;
  let schema: Record<string, unknown>;
  try {
    // `$schema` is noise to the endpoint; some compatible servers reject unknown keywords.
    const { $schema: _ignored, ...rest } = z.toJSONSchema(spec.schema) as Record<string, unknown>;
    schema = strictRequired(rest);
  } catch (error) {
    throw new ConfigurationError(
      `The output schema "${spec.name}" cannot be expressed as JSON Schema (${describeError(error)}). ` +
        'Use plain data types (no transforms or custom checks) in output schemas.',
      { cause: error },
    );
  }
  jsonSchemas.set(spec.schema, schema);
  return schema;
}

export function parseStructuredOutput<TOutput>(
  text: string | null,
  spec: StructuredOutputSpec<TOutput>,
  refusal?: string | null,
): TOutput {
  if (text === null) {
    const message = refusal ? `the model refused: ${refusal}` : 'the reply has no text';
    throw new StructuredOutputError(spec.name, [customIssue(message)], null);
  }
  let value: unknown;
  try {
    value = JSON.parse(stripCodeFence(text));
  } catch (error) {
    throw new StructuredOutputError(spec.name, [customIssue(`the reply is not JSON (${describeError(error)})`)], text);
  }
  const reserved = mayNameReservedKey(text) ? reservedKeyPath(value) : undefined;
  if (reserved !== undefined) throw new StructuredOutputError(spec.name, [{ ...customIssue(reservedKeyMessage(reserved)), path: reserved.map((key) => (typeof key === 'number' ? key : String(key))) }], text);
  const result = spec.schema.safeParse(value);
  if (result.success) return result.data;
  // Optional fields went out nullable (strict mode wants every key): their nulls mean "absent".
  const absent = withoutRefusedNulls(value, result.error.issues);
  const retried = absent === undefined ? undefined : spec.schema.safeParse(absent);
  if (retried?.success === true) return retried.data;
  throw new StructuredOutputError(spec.name, (retried?.error ?? result.error).issues, text);
}

/** Models without enforced schemas often wrap JSON in a Markdown fence. */
function stripCodeFence(text: string): string {
  const match = /^\s*```(?:json)?\s*\n([\s\S]*?)\n?```\s*$/i.exec(text);
  return match?.[1] ?? text;
}

function customIssue(message: string): z.core.$ZodIssue {
  return { code: 'custom', path: [], message, input: undefined };
}
