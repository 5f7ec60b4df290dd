export const STRATEGY_DEFAULTS = {
  concurrency: 4,
  /** When the strategy states no bound of its own. */
  maxRounds: 10,
  /** Branches are full agent runs, so longer than one run's limit. */
  timeoutMs: 15 * 60_000,
  chain: { steps: 3 },
  tree: { breadth: 3, depth: 2, beamWidth: 2 },
  graph: { breadth: 3, mergeTop: 2, rounds: 1 },
  vote: { samples: 5 },
  refine: { maxRevisions: 3 },
  adaptive: {
    /** Difficulty (1–5) from which the medium and the hard strategy are chosen. */
    mediumFrom: 3,
    hardFrom: 4,
  },
} as const;
