export { defineTool, TOOL_NAME_PATTERN } from './defineTool.ts';
export type { ToolDefinition } from './defineTool.ts';
export type { Tool, ToolContext, ToolMetadata } from './types.ts';

export { createToolRegistry } from './registry.ts';
export type { ToolRegistry } from './registry.ts';

export { parseToolArguments, unknownToolObservation } from './arguments.ts';
export type { ToolArgumentsFailure, ToolArgumentsFailureCode, ToolArgumentsResult } from './arguments.ts';

export { serializeToolResult, truncationMarker } from './result.ts';
export type { SerializedToolResult } from './result.ts';
export { formatToolError } from './formatError.ts';
export { ToolError } from './errors.ts';
export type { ToolArgumentIssue, ToolCallRef } from './errors.ts';
