export type RecoveryStrategy =
  | { readonly kind: 'retry'; readonly maxAttempts: number; readonly baseDelayMs: number; readonly maxDelayMs: number }
  | { readonly kind: 'fallback'; readonly tool: string }
  /** The last successful result of the same tool and arguments younger than `maxAgeMs`. */
  | { readonly kind: 'cached'; readonly maxAgeMs: number }
  /** The default. */
  | { readonly kind: 'askModel' }
  /** Stop in `awaitingHuman`; approve re-runs the call, reject feeds the error back. */
  | { readonly kind: 'escalate' }
  | { readonly kind: 'deadLetter' };

export type RecoveryKind = RecoveryStrategy['kind'];

/**
 * @example
 * ```ts
 * defineTool({ name: 'search', …, recovery: recovery.retry({ maxAttempts: 4 }) });
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
