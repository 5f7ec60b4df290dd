/**
 * `ProgressTracker`: per-step re-attempt counting and stuck detection for a coordinator that
 * drives a multi-step task. It does not run anything itself: the coordinator
 * reports each attempt's outcome and gets back `continue` (try again) or `stop` with the
 * configured action (skip the step, abort the task, or escalate to a human).
 *
 * A step stops when it has used all its re-attempts, or earlier when two consecutive errors are
 * near-identical (normalised Levenshtein similarity ≥ the threshold): retrying something that
 * fails the same way again is not progress.
 */
import { DEFAULTS } from '../core/defaults.ts';
import { ConfigurationError } from '../core/errors.ts';
import type { LoopEvent } from '../core/loopEvent.ts';
import { similarity } from './similarity.ts';

/** What a coordinator should do with a step that hit its limit. */
export type LimitAction = 'skipStep' | 'abortTask' | 'escalate';

export interface ProgressTrackerOptions {
  /** Re-attempts after the first failed attempt. Default 2 (three failed attempts in all). */
  readonly maxReattemptsPerStep?: number;
  /** Consecutive errors at least this similar (0–1) stop the step. Default 0.85. */
  readonly similarityThreshold?: number;
  /** Reported with every `stop`. Default `skipStep`. */
  readonly onLimitReached?: LimitAction;
  /** Characters of each error compared. Default `DEFAULTS.progress.compareChars`. */
  readonly compareChars?: number;
  /** Receives `step.limit_reached` once per stopped step (e.g. an agent's event stream). */
  readonly emit?: (event: LoopEvent) => void;
}

/** One attempt of a step: did it succeed, and if not, its error output. */
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

/**
 * Tracks attempts per step and decides when retrying a step stops being worthwhile.
 *
 * @example
 * ```ts
 * const tracker = new ProgressTracker({ onLimitReached: 'escalate', emit: (e) => console.log(e) });
 * tracker.beginStep('extract_data');
 * const decision = tracker.recordAndCheck('extract_data', { ok: false, error: 'HTTP 503' });
 * if (decision.kind === 'stop') handle(decision.action); // 'escalate'
 * ```
 */
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

  /** Attempts recorded for the step since it began (0 for an unknown step). */
  attempts(stepId: string): number {
    return this.#steps.get(stepId)?.attempts ?? 0;
  }

  /**
   * Record one attempt and decide: `continue` (retry, or move on after a success) or `stop`.
   * A stopped step keeps answering the same `stop` until `beginStep` restarts it, and
   * `step.limit_reached` is emitted only the first time. An unknown step is begun implicitly.
   */
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
