/**
 * Replaying a resumed run. Its machine starts again from the run's input and takes the phase
 * replies and human decisions the log recorded, in the order it took them the first time: the
 * machine is deterministic given those, so it arrives where the run was without calling the
 * model, the gate or a hydrator again. The first phase with nothing recorded runs for real, and
 * the run is live from there.
 */
import type { GateOutput, HydrateOutput, ReasonOutput } from '../core/run.ts';
import type { ReplayRecord } from '../persistence/records.ts';
import { ConfigurationError } from '../core/errors.ts';

type HumanRecord = Extract<ReplayRecord, { kind: 'human' }>;
type PhaseReply = Exclude<ReplayRecord, HumanRecord>;

/** What each recorded phase reply gives back to the machine. */
export interface ReplyOutputs {
  readonly hydrate: HydrateOutput;
  readonly reason: ReasonOutput;
  readonly gate: GateOutput;
}

export class Replay {
  #next = 0;
  #live = false;

  /** `records`: what the log recorded, in order. */
  constructor(
    private readonly runId: string,
    private readonly records: readonly ReplayRecord[],
  ) {}

  /** True while the machine is re-taking recorded steps (their events are in the journal already). */
  get replaying(): boolean {
    return !this.#live;
  }

  /** How many recorded steps the machine has taken again. */
  get replayed(): number {
    return this.#next;
  }

  /**
   * The recorded reply of the phase the machine asks for, or `undefined` when none is left: the
   * phase then runs for real. Throws ConfigurationError (replay_mismatch) when the log recorded something else
   * next (the run was resumed with a different agent configuration).
   */
  reply<TPhase extends keyof ReplyOutputs>(phase: TPhase, iteration?: number): ReplyOutputs[TPhase] | undefined {
    const record = this.#take(phase, iteration) as PhaseReply | undefined;
    return record === undefined ? undefined : (record.output as unknown as ReplyOutputs[TPhase]);
  }

  /** The human decision recorded for this wait, or `undefined` when the run waits for a live one. */
  human(): HumanRecord | undefined {
    return this.#take('human');
  }

  /** Live work began outside the replayed phases (a tool call runs again, the run ends). */
  goLive(): void {
    this.#live = true;
  }

  #take<TKind extends ReplayRecord['kind']>(kind: TKind, iteration?: number): Extract<ReplayRecord, { kind: TKind }> | undefined {
    const record = this.records[this.#next];
    if (this.#live || record === undefined) {
      this.goLive();
      return undefined;
    }
    const recordedIteration = 'iteration' in record ? record.iteration : undefined;
    if (record.kind !== kind || (iteration !== undefined && recordedIteration !== undefined && recordedIteration !== iteration)) {
      throw new ConfigurationError(
        `Run ${this.runId} cannot be replayed: its log recorded ${describe(record)} next, but the run asked for ${kind === 'human' ? 'a human decision' : `its ${kind} phase`}` +
          `${iteration === undefined ? '' : ` at iteration ${iteration}`}. Resume it with the agent configuration it was started with.`,
        { runId: this.runId, code: 'replay_mismatch' },
      );
    }
    this.#next++;
    return record as Extract<ReplayRecord, { kind: TKind }>;
  }
}

/**
 * The events the agent machine emits itself while it runs (the runtime emits the others, from
 * work it does). Not `run.terminated`: a run resumed after a resumable failure goes on where its
 * termination stopped it, and never emits that one again.
 */
const MACHINE_EVENTS: ReadonlySet<string> = new Set([
  'run.started',
  'phase.entered',
  'reasoning.completed',
  'tools.dispatched',
  'observations.collected',
  'human.awaiting',
  'human.decided',
]);

/**
 * How many of a run's journaled events its machine emitted: a replay re-emits exactly those
 * first, in the same order, since it takes the same steps.
 */
export function machineEventsIn(eventCounts: ReadonlyMap<string, number>): number {
  let count = 0;
  for (const [type, n] of eventCounts) if (MACHINE_EVENTS.has(type)) count += n;
  return count;
}

function describe(record: PhaseReply | HumanRecord): string {
  if (record.kind === 'human') return 'a human decision';
  return `a ${record.kind} reply${'iteration' in record ? ` at iteration ${record.iteration}` : ''}`;
}
