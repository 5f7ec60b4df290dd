import { randomUUID } from 'node:crypto';
import { concat, defer, from, Subject, type Observable } from 'rxjs';
import { createActor, fromPromise, type Actor, type InspectionEvent, type Observer } from 'xstate';
import { strategyMachine, type StrategyMachine } from '../../machines/strategy.machine.ts';
import { ConfigurationError, describeError } from '../core/errors.ts';
import type { JournalEntry, LoopEvent } from '../core/loopEvent.ts';
import { addUsage, ZERO_USAGE, type InferenceProvider, type Usage } from '../core/provider.ts';
import type { AgentRun } from '../agent/createAgent.ts';
import { createRedactor } from '../security/redactor.ts';
import type { SecretRuleOptions } from '../security/secrets.ts';
import { createStrategyContext } from './context.ts';
import { STRATEGY_DEFAULTS } from './defaults.ts';
import { StrategyRunError } from './errors.ts';
import type {
  StrategyDecideInput,
  StrategyDecideOutput,
  StrategyInitInput,
  StrategyInitOutput,
  StrategyMachineOutput,
} from '../../machines/strategy.types.ts';
import { STRATEGY_ERROR_CODE, STRATEGY_TERMINATION } from '../../machines/strategy.types.ts';
import type { StrategyResult } from './result.ts';
import { branchActor, type SubAgentSource } from './subAgent.ts';
import type { ReasoningStrategy } from '../core/strategy.ts';
import type { Agent, AgentConfig } from '../agent/createAgent.ts';
import { checkDecision } from './validate.ts';
import { defined } from '../core/defined.ts';
import '../events/eventBus.ts'; // sets RxJS onUnhandledError: a throwing events$ subscriber must not crash the host

interface StrategyRuntime {
  init(signal: AbortSignal): Promise<StrategyInitOutput>;
  step(input: StrategyDecideInput, signal: AbortSignal): Promise<StrategyDecideOutput>;
  aggregate(input: StrategyDecideInput, signal: AbortSignal): Promise<StrategyDecideOutput>;
}

function providedMachine(runtime: StrategyRuntime, branch: ReturnType<typeof branchActor>) {
  return strategyMachine.provide({
    actors: {
      init: fromPromise<StrategyInitOutput, StrategyInitInput>(({ signal }) => runtime.init(signal)),
      step: fromPromise<StrategyDecideOutput, StrategyDecideInput>(({ input, signal }) => runtime.step(input, signal)),
      aggregate: fromPromise<StrategyDecideOutput, StrategyDecideInput>(({ input, signal }) => runtime.aggregate(input, signal)),
      branch,
    },
  });
}

export interface RunStrategyOptions<TOptions = unknown, TState = unknown> {
  readonly strategy: ReasoningStrategy<TOptions, TState>;
  /** Default: the options the strategy carries (`strategies.*`). */
  readonly options?: TOptions;
  readonly task: string;
  readonly subAgent: SubAgentSource;
  /** Behind `context.complete`. Default: the sub-agent's, when `subAgent` is an `Agent` or a config. */
  readonly model?: InferenceProvider;
  readonly modelName?: string;
  readonly concurrency?: number;
  readonly maxRounds?: number;
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
  /** Also given to sub-agents built from a config. */
  readonly inspect?: Observer<InspectionEvent> | ((event: InspectionEvent) => void);
  readonly runId?: string;
  /** `agentId` of the runner's journal entries (default `strategy_<name>`). */
  readonly agentId?: string;
  /** Extra secrets to scrub from the runner's events. */
  readonly redact?: SecretRuleOptions;
}

export interface StrategyRun {
  readonly runId: string;
  readonly actor: Actor<StrategyMachine>;
  readonly events$: Observable<JournalEntry>;
  /** Never rejects. */
  readonly settled: Promise<StrategyResult>;
  /** Rejects with a typed `StrategyRunError` carrying the result unless the run is `done`. */
  readonly result: Promise<StrategyResult>;
  cancel(reason?: string): void;
}

const MAX_TIMER_MS = 2 ** 31 - 1;

function positiveInt(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1) throw new ConfigurationError(`runStrategy: \`${name}\` must be a whole number ≥ 1 (got ${String(value)}).`);
  return value;
}

function checkOptions(opts: RunStrategyOptions<unknown, unknown>): void {
  const s = opts.strategy as Partial<ReasoningStrategy> | undefined;
  if (s === undefined || typeof s.name !== 'string' || typeof s.init !== 'function' || typeof s.step !== 'function' || typeof s.aggregate !== 'function') {
    throw new ConfigurationError('runStrategy needs a `strategy` with a name, init, step and aggregate: use one of `strategies.*` or implement ReasoningStrategy.');
  }
  if (typeof opts.task !== 'string' || opts.task.trim() === '') throw new ConfigurationError('runStrategy needs a non-empty `task` string.');
  if (opts.subAgent === undefined || opts.subAgent === null) {
    throw new ConfigurationError('runStrategy needs `subAgent`: an agent config ({ model, tools, … }) or a function (branch) => Agent | config.');
  }
}

/** A factory's provider is unknown until a branch runs. */
function subAgentModel(source: SubAgentSource): InferenceProvider | undefined {
  if (typeof source === 'function') return undefined;
  if ('start' in source && typeof source.start === 'function') return (source as Agent).model.provider;
  const model = (source as AgentConfig).model;
  return model !== null && typeof model === 'object' && 'provider' in model ? model.provider : model;
}

function failureMessage(name: string, output: StrategyMachineOutput): string {
  const why = output.message ?? output.reason;
  switch (output.reason) {
    case 'error':
      return `Strategy "${name}" failed: ${why}. result.thoughts holds what each branch produced.`;
    case 'exception':
      return `Strategy "${name}" stopped because a strategy call threw: ${why}. Fix the strategy, its model or its sub-agent and run again.`;
    case 'max_rounds':
      return `Strategy "${name}" stopped: ${why}. Raise \`maxRounds\`, or lower the strategy's depth, steps or revisions.`;
    case 'timeout':
      return `Strategy "${name}" stopped: ${why}. Raise \`timeoutMs\` or run fewer or cheaper branches.`;
    default:
      return `Strategy "${name}" was cancelled: ${why}.`;
  }
}

/**
 * @example
 * ```ts
 * const run = startStrategy({ strategy: strategies.vote({ samples: 5 }), task: '17 * 23?', subAgent: { model } });
 * const result = await run.result;
 * ```
 */
export function startStrategy<TOptions, TState>(opts: RunStrategyOptions<TOptions, TState>): StrategyRun {
  checkOptions(opts as RunStrategyOptions<unknown, unknown>);
  // Variance: the runner passes the strategy's own state back to it, never inspects it.
  const strategy = opts.strategy as unknown as ReasoningStrategy<unknown, unknown>;
  const name = strategy.name;
  const options: unknown = opts.options ?? (opts.strategy as { options?: unknown }).options;
  const runId = opts.runId ?? `run_${randomUUID()}`;
  const agentId = opts.agentId ?? `strategy_${name}`;
  const concurrency = positiveInt(opts.concurrency, STRATEGY_DEFAULTS.concurrency, 'concurrency');
  const own = typeof strategy.maxRounds === 'function' ? strategy.maxRounds(options) : strategy.maxRounds;
  const ownBound = typeof own === 'number' && Number.isInteger(own) && own >= 1 ? own : STRATEGY_DEFAULTS.maxRounds;
  const maxRounds = positiveInt(opts.maxRounds, ownBound, 'maxRounds');
  const timeoutMs = Math.min(MAX_TIMER_MS, positiveInt(opts.timeoutMs, STRATEGY_DEFAULTS.timeoutMs, 'timeoutMs'));
  const redactor = createRedactor(opts.redact);
  const model = opts.model ?? subAgentModel(opts.subAgent);
  const completion = defined({ model, modelName: opts.modelName });
  const startedAt = Date.now();

  const entries: JournalEntry[] = [];
  const live = new Subject<JournalEntry>();
  let sequence = 0;
  let round = 0;
  const publish = (entry: JournalEntry): void => {
    entries.push(entry);
    live.next(entry);
  };
  const record = (event: LoopEvent): void => {
    // strategy.decided details quote model output: scrub them like any other free text.
    const clean = event.type === 'strategy.decided' ? redactor.deep(event) : redactor.event(event);
    publish({ sequence: sequence++, timestamp: Date.now(), agentId, runId, iteration: round, event: clean });
  };
  const metered = (signal: AbortSignal) => createStrategyContext({ task: opts.task, runId, signal }, completion, name);

  const runtime: StrategyRuntime = {
    init: async (signal) => {
      const { context, usage, cost } = metered(signal);
      const state = await strategy.init(options, context);
      return { state, usage: usage(), costUsd: cost() };
    },
    step: async (input, signal) => {
      const { context, usage, cost } = metered(signal);
      const decision = checkDecision(await strategy.step(input.state, context), name, 'step');
      return { decision, usage: usage(), costUsd: cost() };
    },
    aggregate: async (input, signal) => {
      const { context, usage, cost } = metered(signal);
      const decision = checkDecision(await strategy.aggregate(input.thoughts ?? [], input.state, context), name, 'aggregate');
      return { decision, usage: usage(), costUsd: cost() };
    },
  };
  // Branch runs whose usage the machine has not summed yet; a branch stopped by cancel or timeout never reports it.
  const uncounted = new Map<string, AgentRun>();
  const branch = branchActor({
    source: opts.subAgent,
    forward: publish,
    started: (branchRun) => uncounted.set(branchRun.runId, branchRun),
    ...defined({ inspect: opts.inspect }),
  });

  const actor = createActor(providedMachine(runtime, branch), {
    input: { runId, strategy: name, task: opts.task, model: opts.modelName ?? model?.defaultModel ?? 'none', maxRounds, concurrency, timeoutMs },
    ...defined({ inspect: opts.inspect }),
  });
  actor.on('*', (event) => {
    if (event.type === 'strategy.decided') round = event.round;
    if (event.type === 'branch.finished' && event.runId !== undefined) uncounted.delete(event.runId);
    record(event);
  });

  let resolveSettled!: (result: StrategyResult) => void;
  const settled = new Promise<StrategyResult>((resolve) => (resolveSettled = resolve));
  let finishedWith: { result: StrategyResult; error?: StrategyRunError } | undefined;
  const onAbort = () => actor.send({ type: 'strategy.cancel', reason: describeError(opts.signal?.reason) });
  const finish = (output: StrategyMachineOutput | undefined, thrown?: unknown): void => {
    if (finishedWith !== undefined) return;
    opts.signal?.removeEventListener('abort', onAbort);
    const ended: StrategyMachineOutput = output ?? {
      reason: 'exception',
      answer: null,
      thoughts: [],
      rounds: round,
      usage: ZERO_USAGE,
      costUsd: 0,
      peakInFlight: 0,
      message: describeError(thrown),
      error: thrown,
    };
    // A stopped branch's loop holds what it had spent; a durable branch (its actor only waits on it) is counted where it runs.
    const late = [...uncounted.values()].flatMap((branchRun) => {
      const spent = (branchRun.actor.getSnapshot() as { context?: { usage?: Usage; costUsd?: number } }).context;
      return spent?.usage === undefined ? [] : [{ usage: spent.usage, costUsd: spent.costUsd ?? 0 }];
    });
    uncounted.clear();
    const out: StrategyMachineOutput = {
      ...ended,
      usage: late.reduce((sum, spent) => addUsage(sum, spent.usage), ended.usage),
      costUsd: late.reduce((sum, spent) => sum + spent.costUsd, ended.costUsd),
    };
    const base: StrategyResult = {
      runId,
      agentId,
      strategy: name,
      status: out.reason === 'done' ? 'done' : out.reason === 'cancelled' ? 'cancelled' : 'failed',
      reason: STRATEGY_TERMINATION[out.reason],
      text: out.reason === 'done' ? out.answer : null,
      thoughts: out.thoughts,
      iterations: out.rounds,
      usage: out.usage,
      costUsd: out.costUsd,
      peakConcurrency: out.peakInFlight,
      durationMs: Date.now() - startedAt,
      events: entries,
      ...defined({ cause: out.error }),
    };
    if (out.reason === 'done') finishedWith = { result: base };
    else {
      const message = failureMessage(name, out);
      const probe = new StrategyRunError(STRATEGY_ERROR_CODE[out.reason], message, { result: base });
      const result: StrategyResult = { ...base, error: { name: probe.name, code: probe.code, message, blame: probe.blame } };
      finishedWith = { result, error: new StrategyRunError(STRATEGY_ERROR_CODE[out.reason], message, { result, ...defined({ cause: out.error }) }) };
    }
    live.complete();
    resolveSettled(finishedWith.result);
  };
  actor.subscribe({
    complete: () => finish(actor.getSnapshot().output),
    // The root error observer: an actor error must never be rethrown into the host.
    error: (error: unknown) => finish(undefined, error),
  });
  actor.start();
  if (opts.signal !== undefined) {
    if (opts.signal.aborted) onAbort();
    else opts.signal.addEventListener('abort', onAbort, { once: true });
  }

  const result = settled.then((r) => (finishedWith?.error === undefined ? r : Promise.reject(finishedWith.error)));
  // `result` is optional to await; an unobserved rejection must not crash the host.
  result.catch(() => undefined);
  return {
    runId,
    actor,
    events$: defer(() => concat(from(entries.slice()), live)),
    settled,
    result,
    cancel: (reason?: string) => actor.send(reason === undefined ? { type: 'strategy.cancel' } : { type: 'strategy.cancel', reason }),
  };
}

/**
 * Rejects with a typed `StrategyRunError` carrying the result when the run fails or is cancelled.
 * @example
 * ```ts
 * const { text } = await runStrategy({ strategy: strategies.tree({ depth: 2 }), task, subAgent: { model, tools } });
 * ```
 */
export function runStrategy<TOptions, TState>(opts: RunStrategyOptions<TOptions, TState>): Promise<StrategyResult> {
  return startStrategy(opts).result;
}
