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
  content: {
    /** Largest image part (decoded bytes) a run accepts; the strictest common provider limit. */
    maxImageBytes: 5 * 1024 * 1024,
    /** Largest file (PDF) part, decoded bytes. */
    maxFileBytes: 10 * 1024 * 1024,
    /** Image media types both chat formats accept. */
    imageMediaTypes: ['image/png', 'image/jpeg', 'image/gif', 'image/webp'] as readonly string[],
    /** File media types both chat formats accept as documents. */
    fileMediaTypes: ['application/pdf'] as readonly string[],
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
  persistence: {
    /**
     * How long a writer's claim on a persisted run lasts without renewal, in ms; it renews every
     * third of that. Another process takes a run over only once its writer's lease has expired
     * (or, on the same host, its process is gone).
     */
    leaseMs: 30_000,
    /**
     * Iterations at least between two checkpoints of a resumable run (a resume restores the last
     * one and replays only what followed it).
     */
    checkpointEvery: 10,
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
  progress: {
    /** Re-attempts a step gets after its first failed attempt (ProgressTracker). */
    maxReattemptsPerStep: 2,
    /** Consecutive errors at least this similar (normalised Levenshtein, 0–1) count as stuck. */
    similarityThreshold: 0.85,
    /** What a coordinator should do when a step hits its limit: `skipStep`, `abortTask` or `escalate`. */
    onLimitReached: 'skipStep',
    /** Characters of each (whitespace-normalised) output compared: bounds the cost of huge outputs. */
    compareChars: 2_048,
    /** In-loop stuck detection: on for every agent unless `resilience: { stuckDetection: false }`. */
    stuck: {
      /**
       * Identical calls (tool + canonical arguments) in a row, or near-identical errors in a row, that count as stuck.
       * High enough that a model re-checking something a few times is not stopped, since detection is on by default.
       */
      maxRepeats: 5,
      /** `stop` ends the run with `stuck`; `redirect` first tells the model to change approach. */
      action: 'stop',
    },
  },
  context: {
    /** Tokens (by the estimator) the conversation sent to the model may take. */
    tokenBudget: 32_000,
    /** Added per message to the chars/4 estimate: role, separators and framing cost tokens too. */
    messageOverheadTokens: 4,
    /** What one image or file part counts for in the estimate (providers bill them by pixels or pages, not by bytes). */
    mediaPartTokens: 1_000,
    /** Most recent turns never masked, and kept verbatim next to an anchored summary. */
    keepRecent: 4,
    /** Consecutive summariser failures after which a run stops summarising and only masks/drops. */
    maxSummaryFailures: 3,
    /** Upper bound on the length of one summary, in tokens (asked of the summariser). */
    summaryMaxTokens: 1_024,
    /** After summarising, the view is brought under this fraction of the budget, so one summary lasts several steps. */
    summaryTargetRatio: 0.6,
    /** Characters of one message shown to the summariser; longer contents are cut with a marker. */
    summaryMaxCharsPerMessage: 4_000,
  },
  knowledge: {
    /** Items the bridge injects before one `reason` step. */
    maxItems: 5,
    /** Normalised relevance (0..1) an item needs to be injected by the bridge. */
    minRelevance: 0.3,
    /** Tool results (most recent first) the bridge reads search terms from, after the last user message. */
    recentToolResults: 3,
    /** Distinct search terms the bridge queries with, at most. */
    maxQueryTerms: 32,
    /** Characters of each message the bridge reads terms from (tool results can be 64 KiB). */
    maxCharsPerMessage: 4_000,
    /** Characters of an item's object shown in the injected message or a recall result. */
    maxItemChars: 300,
    /** `recall_knowledge` results when the model gives no `limit`. */
    recallLimit: 5,
    /** Largest `limit` the model may ask `recall_knowledge` for. */
    maxRecallLimit: 50,
    /** Relevance a plain `recall_knowledge` search result needs: low, because the model asked on purpose. */
    recallMinRelevance: 0.1,
    /** Characters of a final answer kept as working memory. */
    workingMemoryMaxChars: 1_000,
    /** Confidence of an auto-persisted answer: unverified, so middling. */
    workingMemoryConfidence: 0.5,
    /** Working-memory items kept; the oldest are dropped past this. */
    maxWorkingItems: 500,
    /**
     * A term found in more than this share of the items is the store's own stop word ("code" in a
     * store of coding conventions): left out of searches that have rarer terms. It matches almost
     * everything, so it says nothing about relevance, and it is by far the costliest to look up.
     */
    commonTermShare: 0.25,
    /** Below this many items no term counts as common (in a tiny store every term is frequent). */
    commonTermMinItems: 50,
  },
  hydration: {
    /** References resolved per run; the rest of those found are skipped (first ones in the task win). */
    maxReferences: 10,
    /** Deadline for resolving every reference (in parallel), in ms; late ones count as failed. */
    timeoutMs: 15_000,
    /** Budget of the injected `[PRE_HYDRATED_CONTEXT]` message, in estimated tokens. */
    maxContextTokens: 4_000,
    /** The token estimate: characters per token. */
    charsPerToken: 4,
    /** The built-in `web_fetch` tool. */
    webFetch: {
      /** Body bytes returned; longer bodies are cut with a marker. */
      maxBytes: 1024 * 1024,
      /** Deadline of one fetch, redirects and body included, in ms. */
      timeoutMs: 10_000,
      /** Redirects followed, each re-checked against the SSRF guard. */
      maxRedirects: 5,
    },
    /** The built-in `file_read` tool. */
    fileRead: {
      /** Bytes of a file returned; longer files are cut with a marker. */
      maxBytes: 256 * 1024,
    },
  },
} as const;
