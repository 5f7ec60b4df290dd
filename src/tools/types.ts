/**
 * What a tool is to the runtime. Tools are declared with `defineTool` (see defineTool.ts).
 */
import type { SessionMemory } from '../core/sessionMemory.ts';
import type { ImagePart } from '../core/messages.ts';
import type { z } from 'zod';
import type { ToolSpec } from '../core/provider.ts';
import type { RecoveryStrategy } from '../resilience/recovery.ts';

/** Passed to every tool execution. */
export interface ToolContext {
  /** Aborted on timeout, on cancellation of the run, or when the agent is stopped. Honour it. */
  readonly signal: AbortSignal;
  readonly toolCallId: string;
  /** `runId:toolCallId` — stable across resumes; use it to make side effects idempotent. */
  readonly idempotencyKey: string;
  readonly runId: string;
  readonly agentId: string;
  /** In a session's run (`agent.session(id)`): the session's memory that tools share; absent otherwise. */
  readonly session?: SessionMemory;
  /**
   * Present when the model takes images (`model.vision`): images given here go to the model
   * beside the tool's text result. Absent otherwise: describe images in the result text instead.
   */
  readonly attachImages?: (images: readonly ImagePart[]) => void;
}

/** Metadata the gate, the executor and the profile read. */
export interface ToolMetadata {
  /** Permission names this tool needs (`fs.read`, `net.fetch`, …); rule gates match on them. */
  readonly permissions: readonly string[];
  /** A human has reviewed this tool; also true when the description contains `[verified]`. */
  readonly verified: boolean;
  /** Every call waits in `awaitingHuman` until approved or rejected. */
  readonly requiresConfirmation: boolean;
  /** Safe to run twice with the same idempotency key (re-run after a crash). Default true. */
  readonly idempotent: boolean;
  /**
   * Its results come from outside the user's trust (web pages, other services): they enter the
   * conversation fenced as data and taint the run, so side-effect calls then need approval.
   */
  readonly untrusted?: boolean;
  /** It changes something outside the agent (writes, sends, executes). Also inferred from permissions such as `fs.write`, `email.send`, `shell.exec`. */
  readonly sideEffects?: boolean;
  /** Per-call timeout overriding the executor default, in ms. */
  readonly timeoutMs?: number;
  /** Recovery strategy for this tool's failures, overriding the agent's default. */
  readonly recovery?: RecoveryStrategy;
}

/** A declared tool. `TInput` is what its zod schema parses to; `TOutput` what `execute` returns. */
export interface Tool<TInput = unknown, TOutput = unknown> extends ToolMetadata {
  readonly name: string;
  readonly description: string;
  readonly input: z.ZodType<TInput>;
  /** JSON Schema of the input, computed once at definition time. */
  readonly spec: ToolSpec;
  execute(input: TInput, context: ToolContext): TOutput | Promise<TOutput>;
}
