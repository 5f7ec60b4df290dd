/**
 * OpenAI's strict JSON Schema wants every property required, so an optional field goes out
 * required and nullable, and a `null` the model sends for it comes back as an absent field.
 */
import type { z } from 'zod';

type Schema = Record<string, unknown>;

const isSchema = (value: unknown): value is Schema => typeof value === 'object' && value !== null && !Array.isArray(value);

const PRIMITIVE = new Set<unknown>(['string', 'number', 'integer', 'boolean']);

function acceptsNull(schema: Schema): boolean {
  const { type, anyOf } = schema;
  if (type === 'null' || (Array.isArray(type) && type.includes('null'))) return true;
  return Array.isArray(anyOf) && anyOf.some((branch) => isSchema(branch) && acceptsNull(branch));
}

function nullable(schema: Schema): Schema {
  if (acceptsNull(schema)) return schema;
  // A bare primitive type takes `null` beside it; an object, array, enum or const gets a branch of its own.
  if (PRIMITIVE.has(schema['type']) && schema['enum'] === undefined && schema['const'] === undefined) return { ...schema, type: [schema['type'], 'null'] };
  return { anyOf: [schema, { type: 'null' }] };
}

const mapValues = (record: Schema, map: (value: Schema) => Schema): Schema =>
  Object.fromEntries(Object.entries(record).map(([key, value]) => [key, isSchema(value) ? map(value) : value]));

/** Returns a new schema; the one given is not changed. */
export function strictRequired(schema: Schema): Schema {
  const out: Schema = { ...schema };
  for (const key of ['anyOf', 'oneOf', 'allOf', 'prefixItems'] as const) {
    const list = schema[key];
    if (Array.isArray(list)) out[key] = list.map((item: unknown) => (isSchema(item) ? strictRequired(item) : item));
  }
  for (const key of ['items', 'additionalProperties', 'not'] as const) {
    const inner = schema[key];
    if (isSchema(inner)) out[key] = strictRequired(inner);
  }
  for (const key of ['$defs', 'definitions'] as const) {
    const defs = schema[key];
    if (isSchema(defs)) out[key] = mapValues(defs, strictRequired);
  }
  const properties = schema['properties'];
  if (isSchema(properties)) {
    const required = new Set(Array.isArray(schema['required']) ? (schema['required'] as unknown[]) : []);
    out['properties'] = Object.fromEntries(
      Object.entries(properties).map(([key, value]) => {
        if (!isSchema(value)) return [key, value];
        const inner = strictRequired(value);
        return [key, required.has(key) ? inner : nullable(inner)];
      }),
    );
    out['required'] = Object.keys(properties);
  }
  return out;
}

/**
 * Removes each object key whose `null` the schema refused as a type (an optional field, sent nullable);
 * `undefined` when there is none, so the caller keeps the first verdict.
 */
export function withoutRefusedNulls(value: unknown, issues: readonly z.core.$ZodIssue[]): unknown {
  const copy: unknown = structuredClone(value);
  let removed = false;
  for (const issue of issues) {
    const key = issue.path.at(-1);
    if (issue.code !== 'invalid_type' || typeof key !== 'string') continue;
    let parent: unknown = copy;
    for (const step of issue.path.slice(0, -1)) parent = isSchema(parent) || Array.isArray(parent) ? (parent as Record<PropertyKey, unknown>)[step as PropertyKey] : undefined;
    if (isSchema(parent) && Object.hasOwn(parent, key) && parent[key] === null) {
      delete parent[key];
      removed = true;
    }
  }
  return removed ? copy : undefined;
}
