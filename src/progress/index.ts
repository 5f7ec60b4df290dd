/**
 * Progress tracking and stuck detection: a per-step `ProgressTracker` for
 * coordinators, and the in-loop `DoomLoopDetector` behind `createAgent({ resilience: { stuckDetection } })`.
 *
 * @example
 * ```ts
 * import { ProgressTracker, similarity } from './progress/index.ts';
 * const tracker = new ProgressTracker({ onLimitReached: 'abortTask' });
 * similarity('ENOENT: no such file a.txt', 'ENOENT: no such file b.txt'); // ≈ 0.96
 * ```
 */
export { ProgressTracker } from './progressTracker.ts';
export type { LimitAction, ProgressTrackerOptions, StepDecision, StepOutcome } from './progressTracker.ts';
export { DoomLoopDetector } from './doomLoop.ts';
export type { DoomLoopCheck, StuckAction, StuckDetection, StuckDetectionOptions } from './doomLoop.ts';
export { createStuckGuard } from './stuckGuard.ts';
export type { StuckGuard, StuckScope } from './stuckGuard.ts';
export { normalizeForComparison, similarity } from './similarity.ts';
export type { SimilarityOptions } from './similarity.ts';
