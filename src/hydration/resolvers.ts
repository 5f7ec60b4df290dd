/** Pre-hydration runs before the first turn and outside the gate, so a tool that needs a human's confirmation cannot be a resolver. */
import { ConfigurationError } from '../core/errors.ts';
import type { Tool } from '../tools/types.ts';
import type { Reference } from './references.ts';

export interface ResolveContext {
  /** Aborted at the pre-hydration deadline or when the run is cancelled. Honour it. */
  readonly signal: AbortSignal;
  readonly runId: string;
  readonly agentId: string;
  readonly callId: string;
}

/** A string is used as is, any other value serialised like a tool result; throw to report the reference unavailable. */
export type ResolverFunction = (reference: Reference, context: ResolveContext) => unknown;

export interface ToolResolver {
  readonly tool: Tool;
  readonly input: (reference: Reference) => unknown;
}

/** A tool whose input has exactly one property gets the reference in it; a string names one of the agent's tools. */
export type ReferenceResolver = ResolverFunction | Tool | ToolResolver | string;

export type ReferenceResolvers = Readonly<Record<string, ReferenceResolver | undefined>>;

function isTool(value: unknown): value is Tool {
  return typeof value === 'object' && value !== null && typeof (value as Tool).execute === 'function' && typeof (value as Tool).spec === 'object';
}

function isToolResolver(value: unknown): value is ToolResolver {
  return typeof value === 'object' && value !== null && isTool((value as ToolResolver).tool) && typeof (value as ToolResolver).input === 'function';
}

function defaultInput(kind: string, tool: Tool): (reference: Reference) => unknown {
  const properties = (tool.spec.parameters as { properties?: Record<string, { type?: unknown }> }).properties ?? {};
  const names = Object.keys(properties);
  if (names.length !== 1) {
    throw new ConfigurationError(
      `The "${kind}" resolver is tool "${tool.name}", whose input has ${names.length} properties (${names.join(', ') || 'none'}); say how to call it: { tool, input: (ref) => ({ …built from ref.value }) }.`,
    );
  }
  const name = names[0]!;
  const type = properties[name]?.type;
  const numeric = type === 'number' || type === 'integer';
  return (reference) => ({ [name]: numeric ? Number(reference.value) : reference.value });
}

function fromTool(kind: string, tool: Tool, input: (reference: Reference) => unknown): ResolverFunction {
  if (tool.requiresConfirmation) {
    throw new ConfigurationError(`Tool "${tool.name}" needs a human's confirmation, so it cannot resolve "${kind}" references before the run; use a read-only tool.`);
  }
  return async (reference, context) => {
    const parsed = tool.input.safeParse(input(reference));
    if (!parsed.success) {
      const issues = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('; ');
      throw new ConfigurationError(`The "${kind}" resolver built an input that tool "${tool.name}" rejects (${issues}); fix its input mapping.`);
    }
    return tool.execute(parsed.data, {
      signal: context.signal,
      toolCallId: context.callId,
      idempotencyKey: `${context.runId}:${context.callId}`,
      runId: context.runId,
      agentId: context.agentId,
    });
  };
}

function byName(kind: string, name: string, tools: readonly Tool[]): Tool {
  const tool = tools.find((candidate) => candidate.name === name);
  if (tool === undefined) {
    const known = tools.map((candidate) => candidate.name).join(', ') || 'none';
    throw new ConfigurationError(`The "${kind}" resolver names tool "${name}", but there is no such tool (known: ${known}); add it to the agent's tools or pass the tool itself.`);
  }
  return tool;
}

/** Checks tools once, at creation. */
export function resolverTable(resolvers: ReferenceResolvers, tools: readonly Tool[] = []): ReadonlyMap<string, ResolverFunction> {
  if (typeof resolvers !== 'object' || resolvers === null) {
    throw new ConfigurationError('Pre-hydration needs `resolvers`, e.g. { url: webFetch(), file: fileRead({ root: "." }) }.');
  }
  const table = new Map<string, ResolverFunction>();
  for (const [kind, resolver] of Object.entries(resolvers)) {
    if (resolver === undefined) continue;
    if (typeof resolver === 'function') table.set(kind, resolver);
    else if (typeof resolver === 'string') {
      const tool = byName(kind, resolver, tools);
      table.set(kind, fromTool(kind, tool, defaultInput(kind, tool)));
    }
    else if (isToolResolver(resolver)) table.set(kind, fromTool(kind, resolver.tool, resolver.input));
    else if (isTool(resolver)) table.set(kind, fromTool(kind, resolver, defaultInput(kind, resolver)));
    else throw new ConfigurationError(`The "${kind}" resolver must be a function, a tool, a tool name, or { tool, input }.`);
  }
  return table;
}
