/** Turns a detector's stop into `ActOutput.stuck`, which the pure agent machine turns into the termination reason `stuck`. */
import type { ActCall, ActOutput, ToolOutcome } from '../core/run.ts';
import type { LoopEvent } from '../core/loopEvent.ts';
import { DoomLoopDetector, type DoomLoopState, type StuckDetectionOptions } from './doomLoop.ts';

/** Per-run identity and event sink: the detector lives as long as this object does. */
export interface StuckScope {
  emit(event: LoopEvent): void;
}

export interface StuckGuard {
  check(scope: StuckScope, calls: readonly ActCall[], outcomes: readonly ToolOutcome[]): ActOutput;
  /** What the run's detector remembers (none: detection is off, or nothing was checked yet). */
  save(scope: StuckScope): DoomLoopState | undefined;
  restore(scope: StuckScope, state: DoomLoopState): void;
}

/** `undefined` detects with the defaults (detection is on unless turned off); `false` passes everything through. */
export function createStuckGuard(configured: StuckDetectionOptions | false | undefined): StuckGuard {
  if (configured === false) return { check: (_scope, _calls, outcomes) => ({ outcomes }), save: () => undefined, restore: () => undefined };
  const options = configured ?? {};
  // Fail on bad options when the agent is created, not in the middle of its first run.
  void new DoomLoopDetector(options);
  // Keyed by the run's scope object, so a finished run's detector goes with its scope.
  const detectors = new WeakMap<StuckScope, DoomLoopDetector>();
  const detectorOf = (scope: StuckScope): DoomLoopDetector => {
    let detector = detectors.get(scope);
    if (detector === undefined) {
      detector = new DoomLoopDetector(options);
      detectors.set(scope, detector);
    }
    return detector;
  };
  return {
    save: (scope) => detectors.get(scope)?.state(),
    restore: (scope, state) => detectorOf(scope).restore(state),
    check(scope, calls, outcomes) {
      const result = detectorOf(scope).check(calls, outcomes);
      for (const detection of result.detections) scope.emit({ type: 'stuck.detected', reason: detection.reason, action: detection.action });
      return { outcomes: result.outcomes, ...(result.stuck === undefined ? {} : { stuck: result.stuck }) };
    },
  };
}
