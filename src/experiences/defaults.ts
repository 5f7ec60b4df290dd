export const EXPERIENCE_DEFAULTS = {
  topK: 5,
  /** Lower than the knowledge bridge's bar because a task is read whole and a rule is short. */
  minRelevance: 0.1,
  /** Bounds the cost of a pasted log. */
  maxTaskChars: 4_000,
  maxQueryTerms: 32,
  /** A longer one is refused: cutting it would change its meaning. */
  maxConditionChars: 500,
  maxRuleChars: 1_000,
  /** A longer one is cut: a cut quote still supports the rule. */
  maxEvidenceChars: 300,
  /** Merging keeps the newest. */
  maxEvidence: 10,
  maxSourceRunIds: 50,
  /** A crashed run is resumed, or a durable step retried, well before this many other runs end. */
  maxCountedRunIds: 100,
  maxCandidates: 3,
  maxTranscriptChars: 24_000,
  maxMessageChars: 2_000,
  maxToolChars: 600,
  /** Shown to the learner so it does not propose them again. */
  maxExistingShown: 20,
} as const;
