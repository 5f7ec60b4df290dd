/**
 * The typed error of conversations: messages that do not form a valid conversation, and content
 * parts a run cannot send.
 */
import { ActorloopError, type ActorloopErrorOptions } from '../core/errors.ts';
import type { CodesOf } from '../core/errorCodes.ts';

/** What can be wrong with a conversation. */
export type ConversationIssueCode =
  /** The value at `index` does not match the message schema. */
  | 'invalid_message'
  /** A tool message answers a call id that no earlier assistant message issued. */
  | 'orphan_tool_result'
  /** A tool message answers a call that an earlier tool message already answered. */
  | 'duplicate_tool_result'
  /** An assistant message issues a call id already used by an earlier (or the same) message. */
  | 'duplicate_tool_call_id';

/** One problem, located by the index of the offending message. */
export interface ConversationIssue {
  readonly index: number;
  readonly code: ConversationIssueCode;
  readonly message: string;
  /** For `invalid_message`: the path inside the message (e.g. `['toolCalls', 0, 'id']`). */
  readonly path?: readonly PropertyKey[];
}

/** What is wrong with a part. */
export type ContentPartProblem =
  /** Its media type is not one the chat formats take (or it cannot be told). */
  | 'unsupported'
  /** Its bytes exceed the configured limit. */
  | 'too_large'
  /** The model is not declared to take images or files (`model.vision`). */
  | 'no_vision'
  /** Its stored bytes cannot be found (a blob missing from the run's store). */
  | 'missing_data';

/**
 * A conversation a run cannot use; blame is the caller's. `code` says which way:
 * - `invalid_conversation`: the messages fail validation (the conversation came from user code,
 *   a persisted store, or a context transform); `issues` lists every problem;
 * - `invalid_content_part`: an image or file part a run cannot send, thrown (or, from
 *   `agent.run`, rejected with) before the run starts; `problem` says what to change.
 *
 * @example
 * ```ts
 * try { assertValidConversation(messages); }
 * catch (e) { if (e instanceof ConversationError) console.log(e.issues.map((i) => i.code)); }
 * try { await agent.run(['Describe this', image(bytes)]); }
 * catch (e) { if (e instanceof ConversationError && e.problem === 'too_large') console.log(e.message); }
 * ```
 */
export class ConversationError extends ActorloopError {
  declare readonly code: CodesOf<'ConversationError'>;
  /** For `invalid_conversation`: every problem (empty for a content part). */
  readonly issues: readonly ConversationIssue[];
  /** For `invalid_content_part`: what is wrong with the part. */
  readonly problem: ContentPartProblem | undefined;

  constructor(issues: readonly ConversationIssue[], options: ActorloopErrorOptions & { readonly problem?: ContentPartProblem; readonly message?: string } = {}) {
    const shown = issues.slice(0, 3).map((issue) => issue.message);
    const more = issues.length > shown.length ? ` (and ${issues.length - shown.length} more)` : '';
    super(
      options.problem === undefined ? 'invalid_conversation' : 'invalid_content_part',
      options.message ?? `Invalid conversation: ${shown.join(' ')}${more}`,
      options,
    );
    this.issues = issues;
    this.problem = options.problem;
  }

  /** `invalid_content_part`: a part the run cannot send, and why. */
  static contentPart(problem: ContentPartProblem, message: string, options: ActorloopErrorOptions = {}): ConversationError {
    return new ConversationError([], { ...options, problem, message });
  }
}
