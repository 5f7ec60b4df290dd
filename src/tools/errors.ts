/**
 * Typed tool errors. They are data first: the executor turns them into observations for the
 * model and into events for the journal (`toJSON` carries the tool fields, never the cause).
 * Blame says who can fix it: the model (a wrong name, malformed arguments — it gets to repair)
 * or the tool (it threw, it hung).
 */
import { ActorloopError, type ActorloopErrorOptions } from '../core/errors.ts';
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

/**
 * The model asked for a tool that does not exist (including names like `__proto__`).
 *
 * @example
 * ```ts
 * new ToolNotFoundError({ toolName: 'serch', toolCallId: 'call_1' }).code; // 'tool_not_found'
 * ```
 */
export class ToolNotFoundError extends ActorloopError {
  readonly code = 'tool_not_found' as const;
  readonly blame = 'model' as const;
  readonly toolName: string;
  readonly toolCallId: string;

  constructor(ref: ToolCallRef, options?: ActorloopErrorOptions) {
    super(`The model called unknown tool ${quoteUntrusted(ref.toolName)}; it is told the available names and may retry.`, options);
    // The name is model output: keep a bounded, well-formed copy for journals and events.
    this.toolName = toWellFormed(sliceChars(ref.toolName, 256));
    this.toolCallId = ref.toolCallId;
  }

  override toJSON() {
    return { ...super.toJSON(), toolName: this.toolName, toolCallId: this.toolCallId };
  }
}

/**
 * The model's arguments were not a JSON object or did not match the tool's schema. `issues`
 * are what the model was shown; `reason` tells which of the two it was.
 *
 * @example
 * ```ts
 * const error = new ToolArgumentsError({ toolName: 'add', toolCallId: 'c1', reason: 'invalid_arguments',
 *   issues: [{ path: 'a', message: 'Invalid input: expected number, received string', code: 'invalid_type' }] });
 * error.blame; // 'model'
 * ```
 */
export class ToolArgumentsError extends ActorloopError {
  readonly code = 'invalid_tool_arguments' as const;
  readonly blame = 'model' as const;
  readonly toolName: string;
  readonly toolCallId: string;
  readonly reason: 'invalid_json' | 'invalid_arguments';
  readonly issues: readonly ToolArgumentIssue[];

  constructor(
    details: ToolCallRef & { readonly reason: 'invalid_json' | 'invalid_arguments'; readonly issues?: readonly ToolArgumentIssue[] },
    options?: ActorloopErrorOptions,
  ) {
    const issues = details.issues ?? [];
    const summary = issues.length === 0 ? details.reason : issues.map((issue) => `${issue.path}: ${issue.message}`).slice(0, 3).join('; ');
    super(
      `The model sent invalid arguments for tool "${details.toolName}" (${summary}); it is shown the issues and may repair them.`,
      options,
    );
    this.toolName = details.toolName;
    this.toolCallId = details.toolCallId;
    this.reason = details.reason;
    this.issues = issues;
  }

  override toJSON() {
    const { toolName, toolCallId, reason, issues } = this;
    return { ...super.toJSON(), toolName, toolCallId, reason, issues };
  }
}

/**
 * A tool threw or rejected. `message` is the sanitised text the model sees (see
 * `formatToolError`); the original value stays on `cause` for local debugging only.
 *
 * @example
 * ```ts
 * new ToolExecutionError({ toolName: 'fetch', toolCallId: 'c1', message: 'TypeError: fetch failed' }).code; // 'tool_failed'
 * ```
 */
export class ToolExecutionError extends ActorloopError {
  readonly code = 'tool_failed' as const;
  readonly blame = 'tool' as const;
  readonly toolName: string;
  readonly toolCallId: string;

  constructor(details: ToolCallRef & { readonly message: string }, options?: ActorloopErrorOptions) {
    super(details.message, options);
    this.toolName = details.toolName;
    this.toolCallId = details.toolCallId;
  }

  override toJSON() {
    return { ...super.toJSON(), toolName: this.toolName, toolCallId: this.toolCallId };
  }
}

/**
 * A tool call ran past its timeout; its AbortSignal was aborted.
 *
 * @example
 * ```ts
 * new ToolTimeoutError({ toolName: 'slow', toolCallId: 'c1', timeoutMs: 30_000 }).message;
 * // 'Tool "slow" did not finish within 30000 ms and was aborted; ...'
 * ```
 */
export class ToolTimeoutError extends ActorloopError {
  readonly code = 'tool_timeout' as const;
  readonly blame = 'tool' as const;
  readonly toolName: string;
  readonly toolCallId: string;
  readonly timeoutMs: number;

  constructor(details: ToolCallRef & { readonly timeoutMs: number }, options?: ActorloopErrorOptions) {
    super(
      `Tool "${details.toolName}" did not finish within ${details.timeoutMs} ms and was aborted; raise its timeoutMs or make it honour the AbortSignal sooner.`,
      options,
    );
    this.toolName = details.toolName;
    this.toolCallId = details.toolCallId;
    this.timeoutMs = details.timeoutMs;
  }

  override toJSON() {
    return { ...super.toJSON(), toolName: this.toolName, toolCallId: this.toolCallId, timeoutMs: this.timeoutMs };
  }
}
