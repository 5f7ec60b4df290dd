/**
 * It looks at calls after they ran (the act phase runs them in parallel), so a repeated call runs N times before the
 * loop ends; the run's iteration, token and time budgets bound everything else.
 */
import { z } from 'zod';
import type { ActCall, ToolOutcome } from '../core/run.ts';
import { DEFAULTS } from '../core/defaults.ts';
import { ConfigurationError } from '../core/errors.ts';
import { ResultCache } from '../executor/memory.ts';
import { normalizeForComparison, similarity } from './similarity.ts';

/** `stop` ends the run as `stuck`; `redirect` tells the model once, then stops if it repeats. */
export type StuckAction = 'stop' | 'redirect';

export interface StuckDetectionOptions {
  /** Identical calls, or near-identical errors, in a row that count as stuck. Default 5 (≥ 2). */
  readonly maxRepeats?: number;
  /** Consecutive errors at least this similar (0–1) are "the same error". Default 0.85. */
  readonly similarityThreshold?: number;
  readonly action?: StuckAction;
  readonly compareChars?: number;
}

export interface StuckDetection {
  readonly reason: string;
  readonly action: StuckAction;
}

export interface DoomLoopCheck {
  /** The outcomes, in call order; a redirected call's content starts with the note to the model. */
  readonly outcomes: ToolOutcome[];
  /** Every detection in this phase (at most one redirect and one stop). */
  readonly detections: readonly StuckDetection[];
  readonly stuck?: { readonly reason: string };
}

/** What a detector remembers between act phases: a checkpoint of its run keeps it. */
export const DoomLoopState = z.object({
  lastCall: z.string().optional(),
  callStreak: z.number().int().nonnegative(),
  lastError: z.string().optional(),
  errorStreak: z.number().int().nonnegative(),
  redirected: z.boolean(),
});
export type DoomLoopState = z.infer<typeof DoomLoopState>;

export class DoomLoopDetector {
  readonly maxRepeats: number;
  readonly similarityThreshold: number;
  readonly action: StuckAction;
  readonly #compareChars: number;
  #lastCall: string | undefined;
  #callStreak = 0;
  #lastError: string | undefined;
  #errorStreak = 0;
  #redirected = false;

  constructor(options: StuckDetectionOptions = {}) {
    const maxRepeats = options.maxRepeats ?? DEFAULTS.progress.stuck.maxRepeats;
    const threshold = options.similarityThreshold ?? DEFAULTS.progress.similarityThreshold;
    if (!Number.isInteger(maxRepeats) || maxRepeats < 2) {
      throw new ConfigurationError(`stuckDetection.maxRepeats must be a whole number ≥ 2 (one call is never a loop), got ${maxRepeats}.`);
    }
    if (!(threshold >= 0 && threshold <= 1)) {
      throw new ConfigurationError(`stuckDetection.similarityThreshold must be between 0 and 1, got ${threshold}.`);
    }
    const compareChars = options.compareChars ?? DEFAULTS.progress.compareChars;
    // Nothing compared makes every two errors identical: distinct failures would read as a loop.
    if (!Number.isInteger(compareChars) || compareChars < 1) {
      throw new ConfigurationError(`stuckDetection.compareChars must be a whole number ≥ 1 (characters of each error compared), got ${compareChars}.`);
    }
    const action = options.action ?? DEFAULTS.progress.stuck.action;
    if (action !== 'stop' && action !== 'redirect') {
      throw new ConfigurationError(`stuckDetection.action must be "stop" or "redirect", got ${JSON.stringify(action)}.`);
    }
    this.maxRepeats = maxRepeats;
    this.similarityThreshold = threshold;
    this.action = action;
    this.#compareChars = compareChars;
  }

  /** The first detection redirects (in `redirect` mode), every later one stops; after a stop the rest of the phase is not examined. */
  check(calls: readonly ActCall[], outcomes: readonly ToolOutcome[]): DoomLoopCheck {
    const out = outcomes.slice();
    const detections: StuckDetection[] = [];
    for (let i = 0; i < calls.length && i < out.length; i++) {
      const call = calls[i] as ActCall;
      const outcome = out[i] as ToolOutcome;
      const found = this.#observe(call, outcome);
      if (found === undefined) continue;
      if (this.action === 'redirect' && !this.#redirected) {
        this.#redirected = true;
        out[i] = { ...outcome, content: `${found.note}\n\n${outcome.content}` };
        detections.push({ reason: found.reason, action: 'redirect' });
        continue;
      }
      detections.push({ reason: found.reason, action: 'stop' });
      return { outcomes: out, detections, stuck: { reason: found.reason } };
    }
    return { outcomes: out, detections };
  }

  /** What the detector remembers, to {@link restore} it in a resumed run. */
  state(): DoomLoopState {
    return {
      ...(this.#lastCall === undefined ? {} : { lastCall: this.#lastCall }),
      callStreak: this.#callStreak,
      ...(this.#lastError === undefined ? {} : { lastError: this.#lastError }),
      errorStreak: this.#errorStreak,
      redirected: this.#redirected,
    };
  }

  restore(state: DoomLoopState): void {
    this.#lastCall = state.lastCall;
    this.#callStreak = state.callStreak;
    this.#lastError = state.lastError;
    this.#errorStreak = state.errorStreak;
    this.#redirected = state.redirected;
  }

  #observe(call: ActCall, outcome: ToolOutcome): { reason: string; note: string } | undefined {
    const key = callKey(call);
    this.#callStreak = key === this.#lastCall ? this.#callStreak + 1 : 1;
    this.#lastCall = key;
    if (outcome.isError) {
      const same =
        this.#lastError !== undefined && similarity(this.#lastError, outcome.content, { maxChars: this.#compareChars }) >= this.similarityThreshold;
      this.#errorStreak = same ? this.#errorStreak + 1 : 1;
      this.#lastError = outcome.content;
    } else {
      this.#errorStreak = 0;
      this.#lastError = undefined;
    }
    const warning = 'If you repeat it again, the run will be stopped.';
    if (this.#callStreak >= this.maxRepeats) {
      return {
        reason: `the model called "${call.call.name}" with the same arguments ${this.#callStreak} times in a row`,
        note: `[actorloop] You have called "${call.call.name}" with the same arguments ${this.#callStreak} times in a row; repeating it will not give a different result. Change your approach: use different arguments or a different tool, or give your final answer. ${warning}`,
      };
    }
    if (this.#errorStreak >= this.maxRepeats) {
      const excerpt = normalizeForComparison(outcome.content, { maxChars: 120 });
      return {
        reason: `${this.#errorStreak} consecutive tool errors were near-identical (≥ ${Math.round(this.similarityThreshold * 100)}% similar): "${excerpt}"`,
        note: `[actorloop] Your last ${this.#errorStreak} tool calls failed with the same error; trying the same thing again will fail the same way. Change your approach: use different arguments or a different tool, or give your final answer. ${warning}`,
      };
    }
    return undefined;
  }
}

/** Tool name plus canonical JSON of the validated arguments (key order does not matter). */
function callKey(call: ActCall): string {
  try {
    return ResultCache.key(call.call.name, call.arguments);
  } catch {
    // Arguments that do not serialise (never the case for parsed JSON): fall back to the raw text.
    return `${call.call.name}\u0000${call.call.arguments}`;
  }
}
