/** Model-written text echoed into an observation is truncated and escaped, so a hostile payload cannot blow it up. */
import type { z } from 'zod';
import { mayNameReservedKey, reservedKeyMessage, reservedKeyPath } from '../core/reservedKeys.ts';
import type { ToolArgumentIssue } from './errors.ts';
import type { ToolRegistry } from './registry.ts';
import { printable, quoteUntrusted, sliceChars } from './text.ts';
import type { Tool } from './types.ts';

const MAX_ISSUES = 10;
const MAX_MESSAGE_CHARS = 240;
const MAX_PATH_CHARS = 120;
const MAX_NAMES = 30;

export type ToolArgumentsFailureCode = 'invalid_json' | 'invalid_arguments';

export interface ToolArgumentsFailure {
  readonly ok: false;
  readonly code: ToolArgumentsFailureCode;
  readonly observation: string;
  readonly issues: readonly ToolArgumentIssue[];
}

export type ToolArgumentsResult<TInput> = { readonly ok: true; readonly value: TInput } | ToolArgumentsFailure;

function listNames(names: readonly string[]): string {
  const shown = names.slice(0, MAX_NAMES).map((name) => sliceChars(name, 64));
  const more = names.length > MAX_NAMES ? ` (and ${names.length - MAX_NAMES} more)` : '';
  return `${shown.join(', ')}${more}`;
}

function parameterHint(tool: Tool<unknown, unknown>): string {
  const { properties, required } = tool.spec.parameters;
  const keys = typeof properties === 'object' && properties !== null ? Object.keys(properties) : [];
  if (keys.length === 0) return 'It takes no parameters: send {}.';
  const needed = new Set(Array.isArray(required) ? required : []);
  return `Parameters: ${listNames(keys.map((key) => (needed.has(key) ? `${key} (required)` : key)))}.`;
}

function jsonKind(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

function invalidJson(tool: Tool<unknown, unknown>, problem: string): ToolArgumentsFailure {
  return {
    ok: false,
    code: 'invalid_json',
    issues: [],
    observation:
      `Invalid arguments for tool "${tool.name}": ${problem}. Call "${tool.name}" again with arguments that are ` +
      `exactly one JSON object matching its parameters schema — no prose, no code fences, nothing cut off. ${parameterHint(tool)}`,
  };
}

function formatPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return '(root)';
  let text = '';
  for (const segment of path) {
    if (typeof segment === 'number') text += `[${segment}]`;
    else if (typeof segment === 'string' && /^[A-Za-z_$][\w$]{0,63}$/.test(segment)) text += text === '' ? segment : `.${segment}`;
    else text += `[${quoteUntrusted(String(segment), 40)}]`;
    if (text.length > MAX_PATH_CHARS) return `${sliceChars(text, MAX_PATH_CHARS)}…`;
  }
  return text;
}

function issueMessage(issue: z.core.$ZodIssue, tool: Tool<unknown, unknown>): string {
  if (issue.code === 'unrecognized_keys') {
    // zod lists every unknown key in one message; a hostile payload may send thousands.
    const keys = issue.keys.slice(0, 5).map((key) => quoteUntrusted(key, 40));
    const more = issue.keys.length > 5 ? ` and ${issue.keys.length - 5} more` : '';
    const { properties } = tool.spec.parameters;
    const allowed =
      issue.path.length === 0 && typeof properties === 'object' && properties !== null
        ? ` (allowed: ${listNames(Object.keys(properties)) || 'none'})`
        : '';
    return `unknown key${issue.keys.length === 1 ? '' : 's'} ${keys.join(', ')}${more}; remove ${issue.keys.length === 1 ? 'it' : 'them'}${allowed}`;
  }
  const message = sliceChars(issue.message, MAX_MESSAGE_CHARS);
  return printable(message.length < issue.message.length ? `${message}…` : message);
}

function invalidArguments(tool: Tool<unknown, unknown>, issues: readonly ToolArgumentIssue[]): ToolArgumentsFailure {
  const shown = issues.slice(0, MAX_ISSUES).map((issue) => `- ${issue.path}: ${issue.message}`);
  if (issues.length > MAX_ISSUES) shown.push(`- …and ${issues.length - MAX_ISSUES} more issues`);
  return {
    ok: false,
    code: 'invalid_arguments',
    issues: issues.slice(0, MAX_ISSUES),
    observation: `Invalid arguments for tool "${tool.name}":\n${shown.join('\n')}\nFix these and call "${tool.name}" again.`,
  };
}

/**
 * The validated value is what `tool.input` produced, so it never carries a polluted prototype.
 * Throws only if the schema itself throws (keep async checks in `execute`).
 */
export function parseToolArguments<TInput>(tool: Tool<TInput, unknown>, raw: string): ToolArgumentsResult<TInput> {
  const anyTool: Tool<unknown, unknown> = tool;
  if (typeof raw !== 'string' || raw.trim() === '') return invalidJson(anyTool, 'the arguments were empty');
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (error) {
    const reason = error instanceof Error ? printable(sliceChars(error.message, 160)) : 'unparsable';
    return invalidJson(anyTool, `the arguments are not valid JSON (${reason})`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return invalidJson(anyTool, `expected a JSON object, got ${jsonKind(value)}`);
  }
  const reserved = mayNameReservedKey(raw) ? reservedKeyPath(value) : undefined;
  if (reserved !== undefined) {
    return invalidArguments(anyTool, [{ path: formatPath(reserved), message: reservedKeyMessage(reserved), code: 'reserved_key' }]);
  }
  const result = tool.input.safeParse(value);
  if (result.success) return { ok: true, value: result.data };
  return invalidArguments(
    anyTool,
    result.error.issues.map((issue) => ({ path: formatPath(issue.path), message: issueMessage(issue, anyTool), code: issue.code })),
  );
}

/** `Search-Web`, `search_web` and `functions.search_web` meet here. */
function normalise(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]/g, '');
}

export function unknownToolObservation(name: string, registry: Pick<ToolRegistry, 'names'>): string {
  const requested = quoteUntrusted(typeof name === 'string' ? name : String(name));
  if (registry.names.length === 0) {
    return `Tool ${requested} not found: no tools are available in this run. Answer without calling tools.`;
  }
  let suggestion = '';
  const wanted = typeof name === 'string' && name.length <= 256 ? normalise(name) : '';
  if (wanted !== '') {
    const match = registry.names.find((candidate) => {
      const known = normalise(candidate);
      return known === wanted || (known.length >= 3 && wanted.endsWith(known));
    });
    if (match !== undefined) suggestion = ` Did you mean "${match}"?`;
  }
  return `Tool ${requested} not found.${suggestion} Available tools: ${listNames(registry.names)}. Call one of them by its exact name.`;
}
