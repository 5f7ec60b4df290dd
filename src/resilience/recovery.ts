/**
 * Recovery strategies: what the executor does when a tool call fails (throws, times out, or its
 * breaker is open). Per tool (`defineTool({ recovery })`) or as the agent default.
 */

export type RecoveryStrategy =
  /** Run the call again after exponential backoff, up to `maxAttempts` attempts in all. */
  | { readonly kind: 'retry'; readonly maxAttempts: number; readonly baseDelayMs: number; readonly maxDelayMs: number }
  /** Run another tool with the same arguments. */
  | { readonly kind: 'fallback'; readonly tool: string }
  /** Answer with the last successful result of the same call (tool + arguments) younger than `maxAgeMs`. */
  | { readonly kind: 'cached'; readonly maxAgeMs: number }
  /** Give the error to the model as an observation (the default). */
  | { readonly kind: 'askModel' }
  /** Stop in `awaitingHuman`; approve re-runs the call, reject feeds the error back. */
  | { readonly kind: 'escalate' }
  /** Record the failure in the dead-letter list and continue with an observation saying so. */
  | { readonly kind: 'deadLetter' };

export type RecoveryKind = RecoveryStrategy['kind'];

/**
 * Constructors for recovery strategies, with the documented defaults filled in.
 *
 * @example
 * ```ts
 * defineTool({ name: 'search', …, recovery: recovery.retry({ maxAttempts: 4 }) });
 * createAgent({ …, resilience: { recovery: recovery.deadLetter() } });
 * ```
 */
export const recovery = {
  retry(options: { maxAttempts?: number; baseDelayMs?: number; maxDelayMs?: number } = {}): RecoveryStrategy {
    return {
      kind: 'retry',
      maxAttempts: options.maxAttempts ?? 3,
      baseDelayMs: options.baseDelayMs ?? 200,
      maxDelayMs: options.maxDelayMs ?? 5_000,
    };
  },
  fallback(tool: string): RecoveryStrategy {
    return { kind: 'fallback', tool };
  },
  cached(options: { maxAgeMs?: number } = {}): RecoveryStrategy {
    return { kind: 'cached', maxAgeMs: options.maxAgeMs ?? 5 * 60_000 };
  },
  askModel(): RecoveryStrategy {
    return { kind: 'askModel' };
  },
  escalate(): RecoveryStrategy {
    return { kind: 'escalate' };
  },
  deadLetter(): RecoveryStrategy {
    return { kind: 'deadLetter' };
  },
} as const;
