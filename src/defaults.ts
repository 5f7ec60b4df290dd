/**
 * Every behaviour-altering default of actorloop, in one place. Change a default here and
 * nowhere else; the rest of the code reads these constants.
 */
export const DEFAULTS = {
  loop: {
    /** Reasoning iterations before the run ends with `max_iterations`. */
    maxIterations: 25,
    /** Total prompt + completion tokens across the run before it ends with `max_tokens`. */
    maxTotalTokens: 100_000,
    /** Wall-clock budget of one run, in ms. */
    timeoutMs: 5 * 60_000,
    /** Turns in which the model may repair malformed tool arguments before a ModelBehaviorError. */
    maxRepairTurns: 3,
  },
  tools: {
    /** Tools running at once within one act phase. */
    maxConcurrency: 5,
    /** Per-call timeout, in ms. */
    timeoutMs: 30_000,
    /** Tool results longer than this many bytes (UTF-8) are truncated with a marker. */
    maxResultBytes: 64 * 1024,
  },
  breaker: {
    /** Consecutive failures that open a breaker. */
    failureThreshold: 3,
    /** Time an open breaker waits before admitting probes, in ms. */
    recoveryTimeoutMs: 60_000,
    /** Probe calls admitted while half-open. */
    halfOpenMaxCalls: 1,
  },
  retry: {
    /** Retries after the first attempt. */
    maxRetries: 3,
    baseDelayMs: 1_000,
    maxDelayMs: 30_000,
    /** Fraction of each delay randomised (0.25 = ±25 %). */
    jitter: 0.25,
    /** Upper bound on a server-requested Retry-After, in ms. */
    maxRetryAfterMs: 60_000,
  },
} as const;
