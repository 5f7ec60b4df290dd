export { ProgressTracker } from './progressTracker.ts';
export type { LimitAction, ProgressTrackerOptions, StepDecision, StepOutcome } from './progressTracker.ts';
export { DoomLoopDetector } from './doomLoop.ts';
export type { DoomLoopCheck, StuckAction, StuckDetection, StuckDetectionOptions } from './doomLoop.ts';
export { createStuckGuard } from './stuckGuard.ts';
export type { StuckGuard, StuckScope } from './stuckGuard.ts';
export { normalizeForComparison, similarity } from './similarity.ts';
export type { SimilarityOptions } from './similarity.ts';
