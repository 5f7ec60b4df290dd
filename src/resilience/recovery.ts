import { ConfigurationError } from '../core/errors.ts';

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

function delay(name: string, value: number): number {
  if (!(Number.isFinite(value) && value >= 0)) throw new ConfigurationError(`recovery.retry: \`${name}\` must be a number of milliseconds ≥ 0 (got ${String(value)}).`);
  return value;
}

/**
 * @example
 * ```ts
 * defineTool({ name: 'search', …, recovery: recovery.retry({ maxAttempts: 4 }) });
 * ```
 */
export const recovery = {
  retry(options: { maxAttempts?: number; baseDelayMs?: number; maxDelayMs?: number } = {}): RecoveryStrategy {
    const maxAttempts = options.maxAttempts ?? 3;
    // `attempt >= NaN` is never true: a NaN or fractional bound would retry until the run is cut off.
    if (!Number.isInteger(maxAttempts) || maxAttempts < 1) {
      throw new ConfigurationError(`recovery.retry: \`maxAttempts\` must be a whole number ≥ 1 (got ${String(maxAttempts)}).`);
    }
    const baseDelayMs = delay('baseDelayMs', options.baseDelayMs ?? 200);
    const maxDelayMs = delay('maxDelayMs', options.maxDelayMs ?? 5_000);
    return { kind: 'retry', maxAttempts, baseDelayMs, maxDelayMs };
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
