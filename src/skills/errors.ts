/**
 * Skill errors. Loading reports bad files as problems instead of throwing, so the only error is
 * the model asking the `skill` tool for a name that does not exist; it reaches the model as an
 * observation listing the names it can use.
 */
import { ActorloopError, type ActorloopErrorOptions } from '../core/errors.ts';
import { quoteUntrusted, sliceChars, toWellFormed } from '../tools/text.ts';

// Enough names to choose from without flooding the observation when a folder holds many.
const MAX_LISTED = 50;

/**
 * The model called the `skill` tool with a name no loaded skill has.
 *
 * @example
 * ```ts
 * new SkillNotFoundError('deploi', ['deploy', 'review']).message;
 * // 'There is no skill "deploi". Call skill again with one of: deploy, review.'
 * ```
 */
export class SkillNotFoundError extends ActorloopError {
  declare readonly code: 'skill_not_found';
  /** The name asked for, bounded (it is model output). */
  readonly requested: string;
  readonly available: readonly string[];

  constructor(requested: string, available: readonly string[], options?: ActorloopErrorOptions) {
    const listed = available.slice(0, MAX_LISTED).join(', ');
    const more = available.length > MAX_LISTED ? ` and ${available.length - MAX_LISTED} more listed in the system prompt` : '';
    super(
      'skill_not_found',
      available.length === 0
        ? `There is no skill ${quoteUntrusted(requested)}: no skills are loaded, so continue without one.`
        : `There is no skill ${quoteUntrusted(requested)}. Call skill again with one of: ${listed}${more}.`,
      options,
    );
    this.requested = toWellFormed(sliceChars(requested, 256));
    this.available = Object.freeze([...available]);
  }

  override toJSON() {
    return { ...super.toJSON(), requested: this.requested };
  }
}
