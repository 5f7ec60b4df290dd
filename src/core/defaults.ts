/** Every behaviour-altering default, in one place: the rest of the code reads these. */
export const DEFAULTS = {
  loop: {
    maxIterations: 25,
    maxTotalTokens: 100_000,
    timeoutMs: 5 * 60_000,
    /** Turns in which the model may repair malformed tool arguments before a ModelBehaviorError. */
    maxRepairTurns: 3,
  },
  content: {
    /** Largest image part (decoded bytes) a run accepts; the strictest common provider limit. */
    maxImageBytes: 5 * 1024 * 1024,
    maxFileBytes: 10 * 1024 * 1024,
    imageMediaTypes: ['image/png', 'image/jpeg', 'image/gif', 'image/webp'] as readonly string[],
    fileMediaTypes: ['application/pdf'] as readonly string[],
  },
  tools: {
    maxConcurrency: 5,
    timeoutMs: 30_000,
    /** Tool results longer than this many bytes (UTF-8) are truncated with a marker. */
    maxResultBytes: 64 * 1024,
  },
  policy: {
    /** A gate's decision (not a human's approval) that takes longer denies the call. */
    gateTimeoutMs: 30_000,
  },
  breaker: {
    failureThreshold: 3,
    recoveryTimeoutMs: 60_000,
    halfOpenMaxCalls: 1,
  },
  persistence: {
    /** A writer's unrenewed claim on a run lasts this long (renewed every third); only then may another process take it over. */
    leaseMs: 30_000,
    /** Iterations at least between checkpoints: a resume replays only what followed the last one. */
    checkpointEvery: 10,
  },
  retry: {
    maxRetries: 3,
    baseDelayMs: 1_000,
    maxDelayMs: 30_000,
    jitter: 0.25,
    maxRetryAfterMs: 60_000,
  },
  progress: {
    maxReattemptsPerStep: 2,
    similarityThreshold: 0.85,
    onLimitReached: 'skipStep',
    /** Characters of each (whitespace-normalised) output compared: bounds the cost of huge outputs. */
    compareChars: 2_048,
    /** In-loop stuck detection: on for every agent unless `resilience: { stuckDetection: false }`. */
    stuck: {
      /** High enough that a model re-checking a few times is not stopped, since detection is on by default. */
      maxRepeats: 5,
      /** `stop` ends the run with `stuck`; `redirect` first tells the model to change approach. */
      action: 'stop',
    },
  },
  context: {
    tokenBudget: 32_000,
    /** Added per message to the bytes/4 estimate: role, separators and framing cost tokens too. */
    messageOverheadTokens: 4,
    /** What one image or file part counts for in the estimate (providers bill them by pixels or pages, not by bytes). */
    mediaPartTokens: 1_000,
    /** Most recent turns never masked, and kept verbatim next to an anchored summary. */
    keepRecent: 4,
    maxSummaryFailures: 3,
    summaryMaxTokens: 1_024,
    /** After summarising, the view is brought under this fraction of the budget, so one summary lasts several steps. */
    summaryTargetRatio: 0.6,
    summaryMaxCharsPerMessage: 4_000,
  },
  knowledge: {
    maxItems: 5,
    minRelevance: 0.3,
    /** Tool results (most recent first) the bridge reads search terms from, after the last user message. */
    recentToolResults: 3,
    maxQueryTerms: 32,
    /** Characters of each message the bridge reads terms from (tool results can be 64 KiB). */
    maxCharsPerMessage: 4_000,
    maxItemChars: 300,
    recallLimit: 5,
    maxRecallLimit: 50,
    /** Relevance a plain `recall_knowledge` search result needs: low, because the model asked on purpose. */
    recallMinRelevance: 0.1,
    workingMemoryMaxChars: 1_000,
    /** Confidence of an auto-persisted answer: unverified, so middling. */
    workingMemoryConfidence: 0.5,
    maxWorkingItems: 500,
    /** A term in more than this share of the items is the store's own stop word, left out of searches that have rarer terms. */
    commonTermShare: 0.25,
    /** Below this many items no term counts as common (in a tiny store every term is frequent). */
    commonTermMinItems: 50,
  },
  mcp: {
    /** What one sampling request of a server allowed with `sampling: true` may make the agent's model write. */
    samplingMaxTokens: 4_096,
  },
  hydration: {
    /** References resolved per run; the rest of those found are skipped (first ones in the task win). */
    maxReferences: 10,
    timeoutMs: 15_000,
    maxContextTokens: 4_000,
    charsPerToken: 4,
    webFetch: {
      maxBytes: 1024 * 1024,
      timeoutMs: 10_000,
      /** Redirects followed, each re-checked against the SSRF guard. */
      maxRedirects: 5,
    },
    fileRead: {
      maxBytes: 256 * 1024,
    },
  },
} as const;
