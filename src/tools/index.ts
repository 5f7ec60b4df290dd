/**
 * Tools: declare them, look them up, validate what the model sends, and turn whatever they
 * return or throw into bounded observations.
 *
 * @example
 * ```ts
 * import { createToolRegistry, defineTool, parseToolArguments, serializeToolResult } from './tools/index.ts';
 * const registry = createToolRegistry([add]);
 * const parsed = parseToolArguments(registry.get('add')!, '{"a":1,"b":2}');
 * if (parsed.ok) serializeToolResult(await add.execute(parsed.value, context)).content; // '3'
 * ```
 */

// Declaring
export { defineTool, TOOL_NAME_PATTERN } from './defineTool.ts';
export type { ToolDefinition } from './defineTool.ts';
export type { Tool, ToolContext, ToolMetadata } from './types.ts';

// Looking up
export { createToolRegistry } from './registry.ts';
export type { ToolRegistry } from './registry.ts';

// Validating model arguments
export { parseToolArguments, unknownToolObservation } from './arguments.ts';
export type { ToolArgumentsFailure, ToolArgumentsFailureCode, ToolArgumentsResult } from './arguments.ts';

// Results and errors as observations
export { serializeToolResult, truncationMarker } from './result.ts';
export type { SerializedToolResult } from './result.ts';
export { formatToolError } from './formatError.ts';
export { ToolError } from './errors.ts';
export type { ToolArgumentIssue, ToolCallRef } from './errors.ts';
