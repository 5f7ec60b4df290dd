/**
 * Defaults of the strategy runner and the built-in strategies. Kept beside them until they move
 * into `DEFAULTS` (src/defaults.ts) as `DEFAULTS.strategy`; read them from here, never inline.
 *
 * @example
 * ```ts
 * const k = options.concurrency ?? STRATEGY_DEFAULTS.concurrency;
 * ```
 */
export const STRATEGY_DEFAULTS = {
  /** Branches (sub-agents) running at once. */
  concurrency: 4,
  /** Decisions a strategy may make before the run fails (when the strategy states no bound of its own). */
  maxRounds: 10,
  /** Wall-clock budget of a whole strategy run, in ms (branches are full agent runs: longer than one run's 5 min). */
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
