export {
  Experience,
  ExperienceDocument,
  experienceKey,
  EXPERIENCES_VERSION,
  ExperienceScope,
  ExperienceStatus,
  NewExperience,
  scopeApplies,
  scopeKey,
  successRateOf,
} from './experience.ts';
export type { ExperienceCandidate, ExperienceContext, ExperienceOutcome } from './experience.ts';
export { EXPERIENCE_DEFAULTS } from './defaults.ts';

export { createMemoryExperienceStore } from './store.ts';
export type { ExperienceAddOptions, ExperienceListFilter, ExperienceOutcomeOptions, ExperienceRelevantOptions, ExperienceStore, ExperienceStoreOptions, SeedExperience } from './store.ts';
export type { Redact } from './prepare.ts';
export { openExperienceStore } from './fileStore.ts';
export type { ExperienceFileOptions } from './fileStore.ts';
export { StoreError } from '../persistence/errors.ts';

export { EXPERIENCES_HEADING, formatExperience, formatExperiences } from './format.ts';

export { FinishedRun, learnExperiences } from './learn.ts';
export type { LearnedExperiences, LearnExperiencesOptions, SkippedCandidate } from './learn.ts';
export { compactTranscript } from './transcript.ts';
export type { TranscriptOptions } from './transcript.ts';
