/**
 * For a coordinator driving a multi-step task: a step stops when its re-attempts are used up, or earlier when two
 * consecutive errors are near-identical, since retrying what fails the same way is not progress.
 */
import { DEFAULTS } from '../core/defaults.ts';
import { ConfigurationError } from '../core/errors.ts';
import type { LoopEvent } from '../core/loopEvent.ts';
import { similarity } from './similarity.ts';

export type LimitAction = 'skipStep' | 'abortTask' | 'escalate';

export interface ProgressTrackerOptions {
  /** Re-attempts after the first failed attempt. Default 2 (three failed attempts in all). */
  readonly maxReattemptsPerStep?: number;
  readonly similarityThreshold?: number;
  /** Reported with every `stop`. Default `skipStep`. */
  readonly onLimitReached?: LimitAction;
  readonly compareChars?: number;
  /** Receives `step.limit_reached` once per stopped step (e.g. an agent's event stream). */
  readonly emit?: (event: LoopEvent) => void;
}

export interface StepOutcome {
  readonly ok: boolean;
  readonly error?: string;
}

export type StepDecision =
  | { readonly kind: 'continue' }
  | { readonly kind: 'stop'; readonly reason: string; readonly action: LimitAction };

interface StepState {
  attempts: number;
  failures: number;
  lastError: string | undefined;
  stopped: Extract<StepDecision, { kind: 'stop' }> | undefined;
}

const CONTINUE: StepDecision = { kind: 'continue' };

export class ProgressTracker {
  readonly maxReattemptsPerStep: number;
  readonly similarityThreshold: number;
  readonly limitAction: LimitAction;
  readonly #compareChars: number;
  readonly #emit: ((event: LoopEvent) => void) | undefined;
  readonly #steps = new Map<string, StepState>();

  constructor(options: ProgressTrackerOptions = {}) {
    const reattempts = options.maxReattemptsPerStep ?? DEFAULTS.progress.maxReattemptsPerStep;
    const threshold = options.similarityThreshold ?? DEFAULTS.progress.similarityThreshold;
    if (!Number.isInteger(reattempts) || reattempts < 0) {
      throw new ConfigurationError(`maxReattemptsPerStep must be a whole number ≥ 0, got ${reattempts}.`);
    }
    if (!(threshold >= 0 && threshold <= 1)) {
      throw new ConfigurationError(`similarityThreshold must be between 0 and 1, got ${threshold}.`);
    }
    this.maxReattemptsPerStep = reattempts;
    this.similarityThreshold = threshold;
    this.limitAction = options.onLimitReached ?? DEFAULTS.progress.onLimitReached;
    this.#compareChars = options.compareChars ?? DEFAULTS.progress.compareChars;
    this.#emit = options.emit;
  }

  /** Start (or restart) tracking a step: its attempts and error history are cleared. */
  beginStep(stepId: string): void {
    this.#steps.set(stepId, { attempts: 0, failures: 0, lastError: undefined, stopped: undefined });
  }

  attempts(stepId: string): number {
    return this.#steps.get(stepId)?.attempts ?? 0;
  }

  /** A stopped step keeps answering the same `stop` until `beginStep` restarts it; `step.limit_reached` is emitted once. */
  recordAndCheck(stepId: string, outcome: StepOutcome): StepDecision {
    let state = this.#steps.get(stepId);
    if (state === undefined) {
      this.beginStep(stepId);
      state = this.#steps.get(stepId) as StepState;
    }
    if (state.stopped !== undefined) return state.stopped;
    state.attempts++;
    if (outcome.ok) {
      // Success breaks any chain of identical errors.
      state.lastError = undefined;
      return CONTINUE;
    }
    state.failures++;
    const error = outcome.error ?? '';
    const previous = state.lastError;
    state.lastError = error;
    if (previous !== undefined) {
      const score = similarity(previous, error, { maxChars: this.#compareChars });
      if (score >= this.similarityThreshold) {
        return this.#stop(stepId, state, `stuck: attempt ${state.attempts} failed like the previous one (${Math.round(score * 100)}% similar)`);
      }
    }
    if (state.failures > this.maxReattemptsPerStep) {
      return this.#stop(stepId, state, `failed ${state.failures} times (the first attempt and ${this.maxReattemptsPerStep} re-attempts)`);
    }
    return CONTINUE;
  }

  #stop(stepId: string, state: StepState, reason: string): StepDecision {
    const decision = { kind: 'stop', reason, action: this.limitAction } as const;
    state.stopped = decision;
    this.#emit?.({ type: 'step.limit_reached', step: stepId, reason, action: this.limitAction });
    return decision;
  }
}
