/**
 * A resumed run takes each phase's recorded reply until none is left; a live reply is recorded before the machine sees it.
 * A stopped phase's reply never reaches the machine, and would land after the log's end record: it is not kept.
 */
import type { PhaseImplementations } from '../../machines/phaseRunner.ts';
import type { GateOutput, HydrateOutput, ReasonOutput } from '../core/run.ts';
import type { RunContext } from './context.ts';

export function recordedPhases(phases: PhaseImplementations<RunContext>): PhaseImplementations<RunContext> {
  const { hydrate } = phases;
  return {
    ...(hydrate === undefined
      ? {}
      : {
          hydrate: (args) => {
            if (!args.run.recorded) return hydrate(args);
            const recorded = args.run.replayed('hydrate');
            if (recorded !== undefined) return Promise.resolve(recorded);
            return Promise.resolve(hydrate(args)).then((reply) => {
              if (!args.cancellation.aborted) args.run.recordReply({ kind: 'hydrate', output: hydrateRecord(reply) });
              return reply;
            });
          },
        }),
    reason: (args) => {
      const { run, input } = args;
      // Nothing to take again or to keep: the phase as it is.
      if (!run.recorded) return phases.reason(args);
      const recorded = run.replayed('reason', input.iteration);
      if (recorded !== undefined) return Promise.resolve(recorded);
      return Promise.resolve(phases.reason(args)).then((reply) => {
        run.recordReply({ kind: 'reason', iteration: input.iteration, output: reasonRecord(reply) });
        return reply;
      });
    },
    gate: (args) => {
      const { run, input } = args;
      if (!run.recorded) return phases.gate(args);
      const recorded = run.replayed('gate', input.iteration);
      if (recorded !== undefined) return Promise.resolve(recorded);
      return Promise.resolve(phases.gate(args)).then((reply: GateOutput) => {
        run.recordReply({ kind: 'gate', iteration: input.iteration, output: { plan: [...reply.plan] } });
        return reply;
      });
    },
    act: phases.act,
  };
}

function hydrateRecord(reply: HydrateOutput) {
  return { inject: [...reply.inject], ...(reply.experiences === undefined || reply.experiences.length === 0 ? {} : { experiences: [...reply.experiences] }) };
}

function reasonRecord({ repair, toolCalls, reasoning, ...rest }: ReasonOutput) {
  return { ...rest, toolCalls: [...toolCalls], ...(repair === undefined ? {} : { repair: [...repair] }), ...(reasoning === undefined ? {} : { reasoning: [...reasoning] }) };
}
