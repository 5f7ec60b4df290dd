// An actor takes a single `inspect` option; this feeds several (the live inspector and a recording, say).
import type { InspectionEvent, Observer } from 'xstate';

type InspectTarget = Observer<InspectionEvent> | ((event: InspectionEvent) => void);

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
