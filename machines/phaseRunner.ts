/**
 * The agent machine's one worker actor: it runs each side-effecting phase (hydrate, reason,
 * gate, act) the machine hands it, one at a time, and replies with the phase's result.
 *
 * Why one long-lived actor instead of a promise actor invoked per phase: invoking an actor
 * creates, starts and stops it — three per loop iteration — and that bookkeeping is most of a
 * minimal XState loop's cost. The phases stay explicit machine states; only who runs their work
 * changed.
 *
 * The phase the machine is in is part of the worker's snapshot (`job`; `null` while a human
 * decides), so a persisted run restores into that phase and the restored worker runs it again,
 * as a restored promise actor would. A phase's `AbortSignal` is made only when read, and aborted
 * when the worker is stopped (the run was cancelled, timed out or ended).
 *
 * @example
 * ```ts
 * const machine = agentMachine.provide({
 *   actors: { phases: phaseRunner({ reason: ({ input, signal }) => callModel(input, signal), gate, act }) },
 * });
 * ```
 */
import type { ActorLogic, AnyActorRef, NonReducibleUnknown, Snapshot } from 'xstate';
import { ConfigurationError } from '../src/core/errors.ts';
import type { Cancellation } from '../src/core/run.ts';
import type { ActInput, ActOutput, GateInput, GateOutput, HydrateInput, HydrateOutput, ReasonInput, ReasonOutput } from '../src/core/run.ts';

/** What a phase implementation receives. */
export interface PhaseArgs<TInput, TRun = undefined> {
  readonly input: TInput;
  /** The run the phase belongs to, as the runner's `runOf` gives it (`undefined` without one). */
  readonly run: TRun;
  /** Aborted when the phase is stopped (the run was cancelled or timed out). */
  readonly signal: AbortSignal;
  /** The same cancellation, readable without making `signal` (for work that may never need one). */
  readonly cancellation: Cancellation;
}

/** A phase implementation: an async function of the phase's input. */
export type Phase<TOutput, TInput, TRun = undefined> = (args: PhaseArgs<TInput, TRun>) => PromiseLike<TOutput>;

/**
 * Type a phase implementation (an identity function: it only gives the arguments their types).
 *
 * @example
 * ```ts
 * const gate = phase<GateOutput, GateInput>(({ input }) => planCalls(input, deps, scope));
 * ```
 */
export function phase<TOutput, TInput, TRun = undefined>(implementation: Phase<TOutput, TInput, TRun>): Phase<TOutput, TInput, TRun> {
  return implementation;
}

/** Implementations of the machine's side-effecting phases. Without `hydrate`, nothing is injected. */
export interface PhaseImplementations<TRun = undefined> {
  readonly hydrate?: Phase<HydrateOutput, HydrateInput, TRun>;
  readonly reason: Phase<ReasonOutput, ReasonInput, TRun>;
  readonly gate: Phase<GateOutput, GateInput, TRun>;
  readonly act: Phase<ActOutput, ActInput, TRun>;
}

/** The inputs and outputs of each phase, by name. */
interface PhaseTypes {
  readonly hydrate: { readonly input: HydrateInput; readonly output: HydrateOutput };
  readonly reason: { readonly input: ReasonInput; readonly output: ReasonOutput };
  readonly gate: { readonly input: GateInput; readonly output: GateOutput };
  readonly act: { readonly input: ActInput; readonly output: ActOutput };
}
export type PhaseName = keyof PhaseTypes;

/** One phase the machine asked for: what the worker's snapshot holds while it runs. */
export type PhaseJob = { readonly [P in PhaseName]: { readonly phase: P; readonly input: PhaseTypes[P]['input'] } }[PhaseName];

/** The machine → worker requests: run this phase; or none is running (waiting for a human). */
export type PhaseRequest = { readonly type: 'phase.run'; readonly job: PhaseJob } | { readonly type: 'phase.idle' };

/** The worker → machine replies: a phase's output (`<phase>.done`) or its failure. */
export type PhaseReply =
  | { readonly [P in PhaseName]: { readonly type: `${P}.done`; readonly output: PhaseTypes[P]['output'] } }[PhaseName]
  | { readonly type: 'phase.error'; readonly phase: PhaseName; readonly error: unknown };

export type PhaseRunnerSnapshot = Snapshot<undefined> & {
  readonly input: undefined;
  /**
   * The phase the machine is in: the last one it asked for (in flight, or answered and about
   * to be followed by the next request in the same step), or `null` while it waits for a human.
   */
  readonly job: PhaseJob | null;
};

/** No input: a worker learns each phase's input from its `phase.run` request. */
export type PhaseRunnerLogic = ActorLogic<PhaseRunnerSnapshot, PhaseRequest, NonReducibleUnknown>;

/** XState's stop event, sent to a child's logic when its state is exited. */
const STOP = 'xstate.stop';

/** What a worker keeps between phases (not part of its snapshot). */
interface Worker {
  /** The run the worker's phases belong to, found once. */
  readonly run: unknown;
  /** The job in flight: the stop event aborts it. */
  current: PhaseCall<unknown> | undefined;
  /** The controller of a finished phase, for the next phase to reuse (see `PhaseCall.signal`). */
  spare: AbortController | undefined;
}
const workers = new WeakMap<AnyActorRef, Worker>();

function workerOf(self: AnyActorRef, runOf: PhaseRunnerOptions<unknown>['runOf']): Worker {
  let worker = workers.get(self);
  if (worker === undefined) {
    worker = { run: runOf?.(self._parent), current: undefined, spare: undefined };
    workers.set(self, worker);
  }
  return worker;
}

/**
 * What a phase implementation receives. The signal is created on first read: an AbortSignal
 * is dear to make and to collect, and the gate never reads its own,
 * the other phases only when their work can be cancelled.
 */
class PhaseCall<TInput> implements PhaseArgs<TInput, unknown>, Cancellation {
  private controller: AbortController | undefined;
  private stopped = false;

  constructor(
    readonly input: TInput,
    private readonly worker: Worker,
    private readonly listening: PhaseRunnerOptions<unknown>['listening'],
  ) {}

  get run(): unknown {
    return this.worker.run;
  }

  get cancellation(): Cancellation {
    return this;
  }

  get aborted(): boolean {
    return this.stopped;
  }

  get reason(): unknown {
    return this.signal.reason;
  }

  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void {
    this.signal.addEventListener(type, listener, options);
  }

  removeEventListener(type: 'abort', listener: () => void): void {
    // Nothing can be listening before the signal exists.
    this.controller?.signal.removeEventListener(type, listener);
  }

  /**
   * With `listening`, a finished phase's signal serves the next phase when nothing listens to it
   * any more: phases run one at a time and each signal aborts only when the worker stops. One
   * that still has a listener (work that subscribed and never unsubscribed, as some HTTP clients
   * do) is left to that work, and the phase gets a new one: listeners never pile up.
   */
  get signal(): AbortSignal {
    if (this.controller === undefined) {
      const spare = this.worker.spare;
      this.worker.spare = undefined;
      this.controller = spare !== undefined && this.listening?.(spare.signal) === false ? spare : new AbortController();
      if (this.stopped) this.controller.abort();
    }
    return this.controller.signal;
  }

  /** The phase is over: its controller, if it made one, may serve the next phase. */
  release(): void {
    if (this.controller !== undefined && !this.stopped && this.listening !== undefined) this.worker.spare = this.controller;
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.controller?.abort();
  }
}

function notProvided(phase: PhaseName): Phase<never, { readonly runId?: string }, unknown> {
  return ({ input }) =>
    Promise.reject(
      new ConfigurationError(
        `The agent machine's "${phase}" phase has no implementation: supply one with agentMachine.provide({ actors: { phases: phaseRunner({ ${phase}, … }) } }).`,
        input.runId === undefined ? {} : { runId: input.runId },
      ),
    );
}

const NOTHING_TO_INJECT: HydrateOutput = Object.freeze({ inject: Object.freeze([]) });
const injectNothing: Phase<HydrateOutput, HydrateInput, unknown> = () => Promise.resolve(NOTHING_TO_INJECT);

function implementationOf(implementations: Partial<PhaseImplementations<unknown>>, phase: PhaseName): Phase<unknown, never, unknown> {
  const implementation = implementations[phase];
  if (implementation !== undefined) return implementation as Phase<unknown, never, unknown>;
  return phase === 'hydrate' ? injectNothing : notProvided(phase);
}

/** Run `job`; a failure to even find its implementation fails the phase. */
function start(job: PhaseJob, self: AnyActorRef, implementations: Partial<PhaseImplementations<unknown>>, options: PhaseRunnerOptions<unknown>): void {
  let worker: Worker;
  try {
    worker = workerOf(self, options.runOf);
  } catch (error) {
    // No run to hand the phase: it fails with why.
    queueMicrotask(() => self._parent?.send(replyOf(job, false, error)));
    return;
  }
  const { listening } = options;
  const call = new PhaseCall<unknown>(job.input, worker, listening);
  worker.current = call;
  let pending: PromiseLike<unknown>;
  try {
    pending = implementationOf(implementations, job.phase)(call as PhaseCall<never>);
  } catch (error) {
    pending = Promise.reject(error);
  }
  // Inline arrows, not a named closure: tsx (keepNames) names every named closure it creates.
  Promise.resolve(pending).then(
    (value) => settle(call, worker, job, self, true, value),
    (error: unknown) => settle(call, worker, job, self, false, error),
  );
}

function settle(call: PhaseCall<unknown>, worker: Worker, job: PhaseJob, self: AnyActorRef, ok: boolean, value: unknown): void {
  // Only the job in flight replies: a stopped worker's, or a replaced job's, result is dropped.
  if (call.aborted || self.getSnapshot().job !== job) return;
  call.release();
  worker.current = undefined;
  // Sent from a promise callback, so the worker's mailbox is idle: the request for the next
  // phase, which the machine sends while handling this reply, reaches the worker (and its
  // snapshot) before the machine's observers (persistence) read it.
  self._parent?.send(replyOf(job, ok, value));
}

/** The reply types, spelled out once: not a new string per reply for XState to match. */
const DONE = { hydrate: 'hydrate.done', reason: 'reason.done', gate: 'gate.done', act: 'act.done' } as const satisfies { [P in PhaseName]: `${P}.done` };

function replyOf(job: PhaseJob, ok: boolean, value: unknown): PhaseReply {
  if (!ok) return { type: 'phase.error', phase: job.phase, error: value };
  return { type: DONE[job.phase], output: value } as PhaseReply;
}

/** How a worker finds its run, and may recycle its phases' AbortControllers. */
export interface PhaseRunnerOptions<TRun = undefined> {
  /** The run the phases belong to, from the machine actor that runs the worker: looked up once per run and handed to every phase as `run`. */
  readonly runOf?: (machine: AnyActorRef | undefined) => TRun;
  /**
   * Whether anything still listens to a finished phase's signal. Given, a signal nobody listens
   * to serves the next phase instead of a new one (an AbortSignal is dear to make and to collect);
   * on Node: `(signal) => getEventListeners(signal, 'abort').length > 0`.
   */
  readonly listening?: (signal: AbortSignal) => boolean;
}

/**
 * The worker that runs the phases with `implementations`: what an agent supplies with
 * `agentMachine.provide({ actors: { phases: phaseRunner(…) } })`. A missing `hydrate` injects
 * nothing; a missing `reason`, `gate` or `act` fails its phase with an error that says what to
 * supply.
 *
 * @example
 * ```ts
 * agentMachine.provide({ actors: { phases: phaseRunner({ reason, gate, act }) } });
 * ```
 */
export function phaseRunner<TRun = undefined>(implementations: Partial<PhaseImplementations<TRun>>, options: PhaseRunnerOptions<TRun> = {}): PhaseRunnerLogic {
  const impls = implementations as Partial<PhaseImplementations<unknown>>;
  const opts = options as PhaseRunnerOptions<unknown>;
  return {
    transition: (snapshot, event, { self, defer }) => {
      if (snapshot.status !== 'active') return snapshot;
      // Typed as the requests, but XState's own stop event comes this way too.
      switch (event.type as PhaseRequest['type'] | typeof STOP) {
        case 'phase.run': {
          const { job } = event as Extract<PhaseRequest, { type: 'phase.run' }>;
          defer(() => start(job, self, impls, opts));
          return { ...snapshot, job };
        }
        case 'phase.idle':
          return snapshot.job === null ? snapshot : { ...snapshot, job: null };
        case STOP:
          workers.get(self)?.current?.stop();
          workers.delete(self);
          return { ...snapshot, status: 'stopped', job: null };
        default:
          return snapshot;
      }
    },
    start: (snapshot, { self }) => {
      // A restored worker resumes the phase it was running when the run was persisted.
      if (snapshot.status === 'active' && snapshot.job !== null) start(snapshot.job, self, impls, opts);
    },
    getInitialSnapshot: () => ({ status: 'active', output: undefined, error: undefined, input: undefined, job: null }),
    getPersistedSnapshot: (snapshot) => snapshot,
    restoreSnapshot: (persisted) => {
      const snapshot = persisted as Partial<PhaseRunnerSnapshot>;
      return { status: snapshot.status ?? 'active', output: undefined, error: undefined, input: undefined, job: snapshot.job ?? null } as PhaseRunnerSnapshot;
    },
  };
}
