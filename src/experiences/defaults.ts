/**
 * The defaults of the experiences module, in one place (the module is self-contained until it is
 * wired into `createAgent`; these can then move into `DEFAULTS`).
 */
export const EXPERIENCE_DEFAULTS = {
  /** Experiences `relevant()` returns when the caller gives no `topK`. */
  topK: 5,
  /**
   * Normalised relevance (0..1, the knowledge index's formula) an experience needs to be returned
   * by `relevant()`: a rule sharing one incidental word with the task is noise in a system prompt,
   * while one sharing a distinctive term ("migration", "API") is worth its line. Lower than the
   * knowledge bridge's bar because a task is read whole and a rule is short.
   */
  minRelevance: 0.1,
  /** Characters of the task read for search terms: bounds the cost of a pasted log. */
  maxTaskChars: 4_000,
  /** Distinct search terms a task is searched with, at most. */
  maxQueryTerms: 32,
  /** Longest condition stored; a longer one is refused (cutting it would change its meaning). */
  maxConditionChars: 500,
  /** Longest rule stored; a longer one is refused. */
  maxRuleChars: 1_000,
  /** Longest evidence entry stored; a longer one is cut (a cut quote still supports the rule). */
  maxEvidenceChars: 300,
  /** Evidence entries kept per experience; merging keeps the newest. */
  maxEvidence: 10,
  /** Source run ids kept per experience; merging keeps the newest. */
  maxSourceRunIds: 50,
  /**
   * Counted run ids kept per experience: a run counted again is recognised while it is among the
   * experience's latest this many (a crashed run is resumed, or a durable step retried, well
   * before that many other runs end).
   */
  maxCountedRunIds: 100,
  /** Candidates `learnExperiences` returns at most. */
  maxCandidates: 3,
  /** Characters of the compacted transcript sent to the learner's model. */
  maxTranscriptChars: 24_000,
  /** Characters of one user or assistant message in the transcript. */
  maxMessageChars: 2_000,
  /** Characters of one tool result or tool-call argument text in the transcript. */
  maxToolChars: 600,
  /** Known experiences shown to the learner's model so it does not propose them again. */
  maxExistingShown: 20,
} as const;
