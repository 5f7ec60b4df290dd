/**
 * `combineInspectors`: one inspection observer that feeds several (the live inspector and a
 * recording, say), since an actor takes a single `inspect` option.
 */
import type { InspectionEvent, Observer } from 'xstate';

type InspectTarget = Observer<InspectionEvent> | ((event: InspectionEvent) => void);

/**
 * Forward every inspection event to each target in turn; a target that throws does not stop
 * the others, nor the actor.
 *
 * @example
 * ```ts
 * const agent = createAgent({ model, observe: { inspect: combineInspectors(inspector.inspect, recorder.inspect) } });
 * ```
 */
export function combineInspectors(...targets: readonly InspectTarget[]): Observer<InspectionEvent> {
  return {
    next(event) {
      for (const target of targets) {
        try {
          if (typeof target === 'function') target(event);
          else target.next?.(event);
        } catch {
          // An inspector is a view: its failure must not reach the run.
        }
      }
    },
  };
}
