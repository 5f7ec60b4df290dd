/** Extension points of the loop; all run inside the runtime's actors, so the machine stays pure. */
import type { Message, ToolCall } from './messages.ts';
import type { LoopEvent, ToolOutcomeStatus } from './loopEvent.ts';
import type { ToolSpec, Usage } from './provider.ts';

export type { HookName } from './loopEvent.ts';

export interface HookContext {
  readonly runId: string;
  readonly agentId: string;
  readonly iteration: number;
  /** Aborted when the run is cancelled or times out: pass it to anything slow the hook starts. */
  readonly signal: AbortSignal;
}

export interface PreparerContext extends HookContext {
  emit(event: LoopEvent): void;
}

/** Transforms what the model sees on one `reason` step (the stored conversation is untouched); preparers chain in order. */
export type MessagePreparer = (messages: readonly Message[], context: PreparerContext) => readonly Message[] | Promise<readonly Message[]>;

/** Runs once before the first model call; `experiences` names those shown, whose statistics count the run's outcome. */
export type Hydrator = (
  input: { readonly task: string; readonly messages: readonly Message[] },
  context: PreparerContext,
) => Promise<{ readonly inject: readonly Message[]; readonly experiences?: readonly string[] }>;

export type Awaitable<T> = T | PromiseLike<T>;

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

export interface ModelReply {
  readonly text: string | null;
  readonly toolCalls: readonly ToolCall[];
  readonly usage: Usage;
  readonly costUsd: number;
}

export interface ToolCallProposal {
  readonly toolCallId: string;
  readonly tool: string;
  /** Validated against the tool's schema (and as the gate may have rewritten them). */
  readonly arguments: unknown;
  readonly permissions: readonly string[];
  /** `confirm`: the call would wait for a human (the gate or the tool asks for it, or the run read untrusted content). */
  readonly verdict: 'run' | 'confirm';
}

/** `approve` is the human's answer in code; `deny` sends the reason to the model; `modify`'s arguments are checked against the schema again. */
export type ToolCallDecision =
  | { readonly kind: 'approve'; readonly reason?: string }
  | { readonly kind: 'deny'; readonly reason: string }
  | { readonly kind: 'modify'; readonly arguments: unknown; readonly reason?: string };

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

export interface Turn {
  readonly iteration: number;
  /** The conversation so far: at a turn's start, what the model is about to read; at its end, with the turn's answer or observations. */
  readonly messages: readonly Message[];
}

/**
 * Typed callbacks into every run, each journalled as `hook.completed`. A hook that throws, times out or returns a
 * non-decision fails the run closed with `HookError` (`hook_failed`); returning nothing means go on unchanged.
 */
export interface AgentHooks {
  /** Before each model call: see the request, change it, or block it (the run fails with a `HookError`, code `model_call_blocked`). */
  beforeModelCall?(request: ModelRequest, context: HookContext): Awaitable<ModelCallDecision | undefined | void>;
  afterModelCall?(reply: ModelReply, context: HookContext): Awaitable<undefined | void>;
  /** For each call the gate allowed (or sent to a human): approve, deny or change it. Not called for calls already blocked. */
  beforeToolCall?(call: ToolCallProposal, context: HookContext): Awaitable<ToolCallDecision | undefined | void>;
  /** For each call that ran: rewrite what the model will see. Recorded with the call, so a resumed run does not call it again. */
  afterToolCall?(result: ToolCallResult, context: HookContext): Awaitable<ToolResultDecision | undefined | void>;
  onTurnStart?(turn: Turn, context: HookContext): Awaitable<undefined | void>;
  /** Once per finished turn; not for a turn cut short by an error, a cancellation or the run's timeout. */
  onTurnEnd?(turn: Turn, context: HookContext): Awaitable<undefined | void>;
  /** When a phase fails and the run is about to end with the error (not for tool errors, which go to the model). */
  onError?(error: unknown, context: HookContext): Awaitable<undefined | void>;
  /** How long an async hook may take before the run fails with `HookError` (`hook_failed`), in ms. Default 10 000. */
  readonly timeoutMs?: number;
}

