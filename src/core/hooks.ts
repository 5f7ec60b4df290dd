/**
 * Extension points of the loop. `AgentHooks` are the user's: typed callbacks that run inside the
 * phases and may change what the model is asked, what a tool is called with, and what it
 * returned. `MessagePreparer` and `Hydrator` are the optional primitives' (context budget,
 * knowledge bridge, pre-hydration). All run inside the runtime's actors, so the machine stays pure.
 */
import type { Message, ToolCall } from './messages.ts';
import type { LoopEvent, ToolOutcomeStatus } from './loopEvent.ts';
import type { ToolSpec, Usage } from './provider.ts';

export type { HookName } from './loopEvent.ts';

/** Where a hook runs: the run, the agent, the iteration and the run's cancellation. */
export interface HookContext {
  readonly runId: string;
  readonly agentId: string;
  /** Completed reasoning iterations so far. */
  readonly iteration: number;
  /** Aborted when the run is cancelled or times out: pass it to anything slow the hook starts. */
  readonly signal: AbortSignal;
}

/** What the runtime's own extension points get besides: a way to journal what they did. */
export interface PreparerContext extends HookContext {
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
export type MessagePreparer = (messages: readonly Message[], context: PreparerContext) => readonly Message[] | Promise<readonly Message[]>;

/**
 * Runs once in `hydrate`, before the first model call; returns messages to insert before the
 * task, and the ids of the experiences they show (whose statistics count the run's outcome).
 */
export type Hydrator = (
  input: { readonly task: string; readonly messages: readonly Message[] },
  context: PreparerContext,
) => Promise<{ readonly inject: readonly Message[]; readonly experiences?: readonly string[] }>;

/** A value or a promise of it: every hook may be sync or async. */
export type Awaitable<T> = T | PromiseLike<T>;

/** One model call as it is about to be sent (after knowledge injection and the context budget). */
export interface ModelRequest {
  readonly messages: readonly Message[];
  readonly tools: readonly ToolSpec[];
  readonly model?: string;
  readonly temperature?: number;
  readonly maxTokens?: number;
}

/** `modify`: send this request instead (fields left out stay as they were); `block`: fail the run, saying why. */
export type ModelCallDecision =
  | { readonly kind: 'modify'; readonly request: Partial<ModelRequest>; readonly reason?: string }
  | { readonly kind: 'block'; readonly reason: string };

/** What the model answered, with secrets already redacted. */
export interface ModelReply {
  readonly text: string | null;
  readonly toolCalls: readonly ToolCall[];
  readonly usage: Usage;
  readonly costUsd: number;
}

/** A call the gate let through, before it runs or waits for a human. */
export interface ToolCallProposal {
  readonly toolCallId: string;
  readonly tool: string;
  /** Validated against the tool's schema (and as the gate may have rewritten them). */
  readonly arguments: unknown;
  readonly permissions: readonly string[];
  /** `confirm`: the call would wait for a human (the gate or the tool asks for it, or the run read untrusted content). */
  readonly verdict: 'run' | 'confirm';
}

/**
 * `approve`: run it now, without waiting for a human (the hook is the human's answer in code);
 * `deny`: do not run it, the reason goes back to the model; `modify`: run it with these
 * arguments (checked against the tool's schema again).
 */
export type ToolCallDecision =
  | { readonly kind: 'approve'; readonly reason?: string }
  | { readonly kind: 'deny'; readonly reason: string }
  | { readonly kind: 'modify'; readonly arguments: unknown; readonly reason?: string };

/** A call's outcome as the model will see it, with secrets already redacted. */
export interface ToolCallResult {
  readonly toolCallId: string;
  readonly tool: string;
  readonly arguments: unknown;
  readonly status: ToolOutcomeStatus;
  readonly content: string;
  readonly isError: boolean;
}

/** `rewrite`: the model sees this content instead (redacted, and fenced again when the tool is untrusted). */
export interface ToolResultDecision {
  readonly kind: 'rewrite';
  readonly content: string;
  readonly reason?: string;
}

/** A turn: one model call and what came of it. */
export interface Turn {
  /** 1 for the run's first model call. */
  readonly iteration: number;
  /** The conversation so far: at a turn's start, what the model is about to read; at its end, with the turn's answer or observations. */
  readonly messages: readonly Message[];
}

/**
 * Typed callbacks into every run of an agent. Each runs inside the phase it belongs to, may be
 * sync or async (awaited under `timeoutMs`), and is journalled as a `hook.completed` event with
 * its time and decision. A hook that throws, times out or returns something that is not a
 * decision fails the run closed with a `HookError` (`hook_failed`) naming it. Returning nothing means
 * "go on unchanged". What hooks see has secrets redacted; what they write is redacted again.
 *
 * @example
 * ```ts
 * const hooks: AgentHooks = {
 *   beforeToolCall: (call) => (call.tool === 'shell' ? { kind: 'deny', reason: 'no shell today' } : undefined),
 *   afterToolCall: (result) => ({ kind: 'rewrite', content: result.content.slice(0, 2_000) }),
 *   onTurnEnd: (turn, { runId }) => console.log(runId, 'turn', turn.iteration),
 * };
 * createAgent({ model, tools, hooks });
 * ```
 */
export interface AgentHooks {
  /** Before each model call: see the request, change it, or block it (the run fails with a `HookError`, code `model_call_blocked`). */
  beforeModelCall?(request: ModelRequest, context: HookContext): Awaitable<ModelCallDecision | undefined | void>;
  /** After each model call that returned, before its calls go to the gate. */
  afterModelCall?(reply: ModelReply, context: HookContext): Awaitable<undefined | void>;
  /** For each call the gate allowed (or sent to a human): approve, deny or change it. Not called for calls already blocked. */
  beforeToolCall?(call: ToolCallProposal, context: HookContext): Awaitable<ToolCallDecision | undefined | void>;
  /** For each call that ran: rewrite what the model will see. Recorded with the call, so a resumed run does not call it again. */
  afterToolCall?(result: ToolCallResult, context: HookContext): Awaitable<ToolResultDecision | undefined | void>;
  /** At the start of each turn, before the model call (and before `beforeModelCall`). */
  onTurnStart?(turn: Turn, context: HookContext): Awaitable<undefined | void>;
  /**
   * Once per finished turn: after the final answer, or once the turn's observations are in (when
   * the next turn starts, or when a limit then ends the run). Not for a turn cut short by an
   * error, a cancellation or the run's timeout.
   */
  onTurnEnd?(turn: Turn, context: HookContext): Awaitable<undefined | void>;
  /** When a phase fails and the run is about to end with the error (not for tool errors, which go to the model). */
  onError?(error: unknown, context: HookContext): Awaitable<undefined | void>;
  /** How long an async hook may take before the run fails with a `HookError` (`hook_failed`), in ms. Default 10 000. */
  readonly timeoutMs?: number;
}

