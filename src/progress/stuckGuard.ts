/**
 * The glue between `createAgent({ resilience: { stuckDetection } })` and the act phase: one
 * {@link DoomLoopDetector} per run, fed every act phase's outcomes, announcing each detection as
 * `stuck.detected` and turning a stop into `ActOutput.stuck` — which the (pure) agent machine
 * turns into the termination reason `stuck`.
 */
import type { ActCall, ActOutput, ToolOutcome } from '../core/run.ts';
import type { LoopEvent } from '../core/loopEvent.ts';
import { DoomLoopDetector, type DoomLoopState, type StuckDetectionOptions } from './doomLoop.ts';

/** Per-run identity and event sink: the detector lives as long as this object does. */
export interface StuckScope {
  emit(event: LoopEvent): void;
}

export interface StuckGuard {
  /** The act phase's output: outcomes (possibly with a redirect note) and `stuck` when the run must end. */
  check(scope: StuckScope, calls: readonly ActCall[], outcomes: readonly ToolOutcome[]): ActOutput;
  /** What the run's detector remembers (none: detection is off, or nothing was checked yet). */
  save(scope: StuckScope): DoomLoopState | undefined;
  /** Give a resumed run's detector what it remembered when its checkpoint was taken. */
  restore(scope: StuckScope, state: DoomLoopState): void;
}

/**
 * Create the guard for an agent. `undefined` detects with the defaults (detection is on unless
 * turned off); `false` gives a pass-through guard. Options are validated here, at configuration time.
 *
 * @example
 * ```ts
 * const stuck = createStuckGuard({ maxRepeats: 3, action: 'redirect' });
 * const output = stuck.check(runScope, input.calls, await executor.run(input.calls, scope));
 * ```
 */
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
