/**
 * Experience errors. A corrupt or future-version experiences file is reported with the shared
 * persistence errors (`CorruptFileError`, `UnsupportedVersionError`) and is never replaced by an
 * empty store; an invalid new experience is a `ConfigurationError`, like an invalid knowledge item.
 */
import { ActorloopError, type ActorloopErrorOptions } from '../core/errors.ts';

/**
 * Another live process (or another open store in this one) writes the same experiences file; two
 * writers would lose each other's changes.
 *
 * @example
 * ```ts
 * try { await openExperienceStore({ file }); }
 * catch (e) { if (e instanceof ExperienceStoreLockedError) console.log('close the other store first', e.file); }
 * ```
 */
export class ExperienceStoreLockedError extends ActorloopError {
  readonly code = 'experience_store_locked' as const;
  readonly blame = 'user' as const;
  readonly file: string;
  constructor(message: string, options: ActorloopErrorOptions & { readonly file: string }) {
    super(message, options);
    this.file = options.file;
  }
}

/**
 * The store was closed; open it again to change it.
 *
 * @example
 * ```ts
 * await store.close();
 * await store.add(candidate); // rejects with ExperienceStoreClosedError
 * ```
 */
export class ExperienceStoreClosedError extends ActorloopError {
  readonly code = 'experience_store_closed' as const;
  readonly blame = 'user' as const;
}

/**
 * No experience has that id (it was never stored, or was removed).
 *
 * @example
 * ```ts
 * await store.accept('exp_missing'); // rejects with ExperienceNotFoundError, e.id === 'exp_missing'
 * ```
 */
export class ExperienceNotFoundError extends ActorloopError {
  readonly code = 'experience_not_found' as const;
  readonly blame = 'user' as const;
  readonly id: string;
  constructor(id: string, options: ActorloopErrorOptions = {}) {
    super(`No experience has the id ${JSON.stringify(id)}. List the store (store.list()) for the ids it holds; it may have been removed.`, options);
    this.id = id;
  }
}

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
