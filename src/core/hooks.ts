/**
 * Extension points of the loop, for the optional primitives (context budget, knowledge bridge,
 * pre-hydration) and for users who need their own. They run inside the runtime's actors, so the
 * machine stays pure and unchanged.
 */
import type { Message } from './messages.ts';
import type { LoopEvent } from './loopEvent.ts';

export interface HookContext {
  readonly runId: string;
  readonly agentId: string;
  /** Completed reasoning iterations so far. */
  readonly iteration: number;
  readonly signal: AbortSignal;
  emit(event: LoopEvent): void;
}

/**
 * Transforms the conversation the model sees on one `reason` step (the stored conversation is
 * untouched). Preparers run in order; each gets the previous one's output.
 *
 * @example
 * ```ts
 * const lastTwenty: MessagePreparer = (messages) => messages.slice(-20);
 * ```
 */
export type MessagePreparer = (messages: readonly Message[], context: HookContext) => readonly Message[] | Promise<readonly Message[]>;

/** Runs once in `hydrate`, before the first model call; returns messages to insert before the task. */
export type Hydrator = (
  input: { readonly task: string; readonly messages: readonly Message[] },
  context: HookContext,
) => Promise<{ readonly inject: readonly Message[] }>;
