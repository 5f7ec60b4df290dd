import type { SessionMemory } from '../core/sessionMemory.ts';
import type { ImagePart } from '../core/messages.ts';
import type { z } from 'zod';
import type { ToolSpec } from '../core/provider.ts';
import type { RecoveryStrategy } from '../resilience/recovery.ts';

export interface ToolContext {
  /** Aborted on timeout, cancellation or stop. Honour it. */
  readonly signal: AbortSignal;
  readonly toolCallId: string;
  /** Stable across resumes; use it to make side effects idempotent. */
  readonly idempotencyKey: string;
  readonly runId: string;
  readonly agentId: string;
  readonly session?: SessionMemory;
  /** Present when the model takes images; absent otherwise: describe images in the result text. */
  readonly attachImages?: (images: readonly ImagePart[]) => void;
}

export interface ToolMetadata {
  /** Rule gates match on these (`fs.read`, `net.fetch`, …). */
  readonly permissions: readonly string[];
  readonly verified: boolean;
  readonly requiresConfirmation: boolean;
  /** Safe to re-run after a crash with the same idempotency key. Default true. */
  readonly idempotent: boolean;
  /** Results are fenced as data and taint the run, so side-effect calls then need approval. */
  readonly untrusted?: boolean;
  /** Also inferred from permissions such as `fs.write`, `email.send`, `shell.exec`. */
  readonly sideEffects?: boolean;
  readonly timeoutMs?: number;
  readonly recovery?: RecoveryStrategy;
}

export interface Tool<TInput = unknown, TOutput = unknown> extends ToolMetadata {
  readonly name: string;
  readonly description: string;
  readonly input: z.ZodType<TInput>;
  readonly spec: ToolSpec;
  execute(input: TInput, context: ToolContext): TOutput | Promise<TOutput>;
}
