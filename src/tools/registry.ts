/**
 * A `Map`, so model-chosen names like `__proto__` or `toString` are ordinary unknown names.
 * `get(n).execute` accepts `unknown`: only ever pass it what `tool.input` parsed.
 */
import { ConfigurationError } from '../core/errors.ts';
import type { ToolSpec } from '../core/provider.ts';
import { TOOL_NAME_PATTERN } from './defineTool.ts';
import type { Tool } from './types.ts';

export interface ToolRegistry {
  get(name: string): Tool | undefined;
  has(name: string): boolean;
  readonly specs: readonly ToolSpec[];
  readonly names: readonly string[];
  readonly tools: readonly Tool[];
  readonly size: number;
}

function checkTool(tool: unknown, index: number): asserts tool is Tool {
  const label = `Tool #${index}`;
  if (typeof tool !== 'object' || tool === null) {
    throw new ConfigurationError(`${label} is not a tool object; create tools with defineTool(...).`);
  }
  const { name, execute, spec } = tool as Partial<Tool>;
  if (typeof name !== 'string' || !TOOL_NAME_PATTERN.test(name)) {
    throw new ConfigurationError(`${label} has an invalid name; names are 1–64 characters from a-z, A-Z, 0-9, "_" and "-". Create tools with defineTool(...).`);
  }
  if (typeof execute !== 'function' || typeof spec !== 'object' || spec === null || spec.name !== name) {
    throw new ConfigurationError(`${label} ("${name}") lacks execute or a matching spec; create tools with defineTool(...).`);
  }
}

export function createToolRegistry(tools: readonly Tool[]): ToolRegistry {
  if (!Array.isArray(tools)) throw new ConfigurationError('createToolRegistry needs an array of tools.');
  const byName = new Map<string, Tool>();
  const positions = new Map<string, number>();
  tools.forEach((tool: unknown, index) => {
    checkTool(tool, index);
    const earlier = positions.get(tool.name);
    if (earlier !== undefined) {
      throw new ConfigurationError(
        `Tools #${earlier} and #${index} are both named "${tool.name}"; tool names must be unique — rename one, or filter the sources with a tool profile.`,
      );
    }
    positions.set(tool.name, index);
    byName.set(tool.name, tool);
  });
  const list = Object.freeze([...byName.values()]);
  const specs = Object.freeze(list.map((tool) => tool.spec));
  const names = Object.freeze(list.map((tool) => tool.name));
  return Object.freeze({
    get: (name: string) => (typeof name === 'string' ? byName.get(name) : undefined),
    has: (name: string) => typeof name === 'string' && byName.has(name),
    specs,
    names,
    tools: list,
    size: list.length,
  });
}
