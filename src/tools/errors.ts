/**
 * Typed tool errors. They are data first: the executor turns them into observations for the
 * model and into events for the journal (`toJSON` carries the tool fields, never the cause).
 * Blame says who can fix it: the model (a wrong name, malformed arguments — it gets to repair)
 * or the tool (it threw, it hung).
 */
import { ActorloopError, type ActorloopErrorOptions } from '../core/errors.ts';
import type { CodesOf } from '../core/errorCodes.ts';
import { quoteUntrusted, sliceChars, toWellFormed } from './text.ts';

/** One validation problem with tool arguments, as the model is shown it. */
export interface ToolArgumentIssue {
  /** Where in the arguments: `a`, `items[2].name`, or `(root)`. */
  readonly path: string;
  readonly message: string;
  /** zod's issue code (`invalid_type`, `unrecognized_keys`, …) or `reserved_key`. */
  readonly code: string;
}

/** Identifies the call an error belongs to. */
export interface ToolCallRef {
  readonly toolName: string;
  readonly toolCallId: string;
}

type ToolErrorCode = CodesOf<'ToolError'>;

interface ToolErrorFields extends ToolCallRef {
  readonly reason?: 'invalid_json' | 'invalid_arguments';
  readonly issues?: readonly ToolArgumentIssue[];
  readonly timeoutMs?: number;
}

/**
 * A tool call that failed; `code` says how, and the static methods build each:
 * - `tool_not_found` (`notFound`): the model asked for a tool that does not exist (including
 *   names like `__proto__`);
 * - `invalid_tool_arguments` (`invalidArguments`): the arguments were not a JSON object
 *   (`reason: 'invalid_json'`) or did not match the tool's schema (`'invalid_arguments'`);
 *   `issues` are what the model was shown;
 * - `tool_failed` (`failed`): the tool threw or rejected; `message` is the sanitised text the
 *   model sees, the original value stays on `cause` for local debugging only;
 * - `tool_timeout` (`timeout`): the call ran past `timeoutMs`; its AbortSignal was aborted.
 *
 * @example
 * ```ts
 * ToolError.notFound({ toolName: 'serch', toolCallId: 'call_1' }).code; // 'tool_not_found'
 * ToolError.timeout({ toolName: 'slow', toolCallId: 'c1', timeoutMs: 30_000 }).blame; // 'tool'
 * ```
 */
export class ToolError extends ActorloopError {
  declare readonly code: ToolErrorCode;
  readonly toolName: string;
  readonly toolCallId: string;
  /** For `invalid_tool_arguments`: which of the two it was. */
  readonly reason: 'invalid_json' | 'invalid_arguments' | undefined;
  /** For `invalid_tool_arguments`: the problems the model was shown (empty for the other codes). */
  readonly issues: readonly ToolArgumentIssue[];
  /** For `tool_timeout`: the timeout that ran out. */
  readonly timeoutMs: number | undefined;

  private constructor(code: ToolErrorCode, message: string, fields: ToolErrorFields, options?: ActorloopErrorOptions) {
    super(code, message, options);
    this.toolName = fields.toolName;
    this.toolCallId = fields.toolCallId;
    this.reason = fields.reason;
    this.issues = fields.issues ?? [];
    this.timeoutMs = fields.timeoutMs;
  }

  static notFound(ref: ToolCallRef, options?: ActorloopErrorOptions): ToolError {
    // The name is model output: keep a bounded, well-formed copy for journals and events.
    const toolName = toWellFormed(sliceChars(ref.toolName, 256));
    return new ToolError(
      'tool_not_found',
      `The model called unknown tool ${quoteUntrusted(ref.toolName)}; it is told the available names and may retry.`,
      { toolName, toolCallId: ref.toolCallId },
      options,
    );
  }

  static invalidArguments(
    details: ToolCallRef & { readonly reason: 'invalid_json' | 'invalid_arguments'; readonly issues?: readonly ToolArgumentIssue[] },
    options?: ActorloopErrorOptions,
  ): ToolError {
    const issues = details.issues ?? [];
    const summary = issues.length === 0 ? details.reason : issues.map((issue) => `${issue.path}: ${issue.message}`).slice(0, 3).join('; ');
    return new ToolError(
      'invalid_tool_arguments',
      `The model sent invalid arguments for tool "${details.toolName}" (${summary}); it is shown the issues and may repair them.`,
      { ...details, issues },
      options,
    );
  }

  static failed(details: ToolCallRef & { readonly message: string }, options?: ActorloopErrorOptions): ToolError {
    return new ToolError('tool_failed', details.message, { toolName: details.toolName, toolCallId: details.toolCallId }, options);
  }

  static timeout(details: ToolCallRef & { readonly timeoutMs: number }, options?: ActorloopErrorOptions): ToolError {
    return new ToolError(
      'tool_timeout',
      `Tool "${details.toolName}" did not finish within ${details.timeoutMs} ms and was aborted; raise its timeoutMs or make it honour the AbortSignal sooner.`,
      details,
      options,
    );
  }

  override toJSON() {
    const { toolName, toolCallId, reason, issues, timeoutMs } = this;
    const json = { ...super.toJSON(), toolName, toolCallId };
    if (this.code === 'invalid_tool_arguments') return { ...json, reason, issues };
    if (this.code === 'tool_timeout') return { ...json, timeoutMs };
    return json;
  }
}
