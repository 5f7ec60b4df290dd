/** The machine is deterministic given the recorded replies and decisions, so a replay arrives where the run was without calling anything. */
import type { GateOutput, HydrateOutput, ReasonOutput } from '../core/run.ts';
import type { ReplayRecord } from '../persistence/records.ts';
import { ConfigurationError } from '../core/errors.ts';

type HumanRecord = Extract<ReplayRecord, { kind: 'human' }>;
type PhaseReply = Exclude<ReplayRecord, HumanRecord>;

export interface ReplyOutputs {
  readonly hydrate: HydrateOutput;
  readonly reason: ReasonOutput;
  readonly gate: GateOutput;
}

export class Replay {
  #next = 0;
  #live = false;

  constructor(
    private readonly runId: string,
    private readonly records: readonly ReplayRecord[],
  ) {}

  get replaying(): boolean {
    return !this.#live;
  }

  get replayed(): number {
    return this.#next;
  }

  /** `undefined` when none is left; ConfigurationError (`replay_mismatch`) when the log recorded something else next (another configuration). */
  reply<TPhase extends keyof ReplyOutputs>(phase: TPhase, iteration?: number): ReplyOutputs[TPhase] | undefined {
    const record = this.#take(phase, iteration) as PhaseReply | undefined;
    return record === undefined ? undefined : (record.output as unknown as ReplyOutputs[TPhase]);
  }

  human(): HumanRecord | undefined {
    return this.#take('human');
  }

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

/** Events the machine emits itself; not `run.terminated`, which a resumed run never emits again. */
const MACHINE_EVENTS: ReadonlySet<string> = new Set([
  'run.started',
  'phase.entered',
  'reasoning.completed',
  'tools.dispatched',
  'observations.collected',
  'human.awaiting',
  'human.decided',
]);

/** How many of a run's journaled events its machine emitted: a replay re-emits exactly those first. */
export function machineEventsIn(eventCounts: ReadonlyMap<string, number>): number {
  let count = 0;
  for (const [type, n] of eventCounts) if (MACHINE_EVENTS.has(type)) count += n;
  return count;
}

function describe(record: PhaseReply | HumanRecord): string {
  if (record.kind === 'human') return 'a human decision';
  return `a ${record.kind} reply${'iteration' in record ? ` at iteration ${record.iteration}` : ''}`;
}
