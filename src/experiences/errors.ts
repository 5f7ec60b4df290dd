/**
 * Experience errors. A corrupt or future-version experiences file is reported with the shared
 * persistence errors (`CorruptFileError`, `UnsupportedVersionError`) and is never replaced by an
 * empty store; a locked or closed store and an unknown id with the shared store errors
 * (`StoreLockedError`, `StoreClosedError`, `StoreItemNotFoundError`); an invalid new experience
 * is a `ConfigurationError`, like an invalid knowledge item.
 */
import { ActorloopError } from '../core/errors.ts';

/**
 * The learner's model answered with something that is not a list of experience candidates (not
 * JSON, or not matching the schema). Nothing was learned from the run; `runId` names it.
 *
 * @example
 * ```ts
 * try { await learnExperiences({ model, run }); }
 * catch (e) { if (e instanceof InvalidExperienceAnswerError) console.log('nothing learned from', e.runId); }
 * ```
 */
export class InvalidExperienceAnswerError extends ActorloopError {
  readonly code = 'experience_invalid_answer' as const;
  readonly blame = 'model' as const;
}
