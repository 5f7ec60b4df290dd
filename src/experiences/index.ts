/**
 * Experiences: rules an agent learns from its runs and carries to later ones — "when
 * <condition>, <rule>" — with the evidence and runs they came from, where they apply (everywhere,
 * one project, one tool) and how the runs that used them turned out. A learner proposes them from
 * a finished run; a store keeps them (pending until accepted), retrieves the active ones relevant
 * to a new task, and counts outcomes; `formatExperiences` writes the system-prompt section.
 *
 * @example
 * ```ts
 * import { formatExperiences, learnExperiences, openExperienceStore } from './experiences/index.ts';
 * const store = await openExperienceStore({ redact: createRedactor().text });
 * const shown = store.relevant(task, { topK: 5, project: process.cwd(), tools: ['read_file', 'run_tests'] });
 * const system = composeSystemPrompt({ ...defaultSections, experiences: formatExperiences(shown) });
 * // … the run ends …
 * await store.recordOutcome(shown.map((e) => e.id), result.status === 'done' ? 'success' : 'failure');
 * const { candidates } = await learnExperiences({ model, run: { runId, task, status: result.status, messages }, existing: shown });
 * for (const candidate of candidates) await store.add(candidate); // pending: store.accept(id) makes it active
 * await store.close();
 * ```
 */

// Experiences
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

// Stores
export { createMemoryExperienceStore } from './store.ts';
export type { ExperienceAddOptions, ExperienceListFilter, ExperienceOutcomeOptions, ExperienceRelevantOptions, ExperienceStore, ExperienceStoreOptions, SeedExperience } from './store.ts';
export type { Redact } from './prepare.ts';
export { openExperienceStore } from './fileStore.ts';
export type { ExperienceFileOptions } from './fileStore.ts';
export { StoreError } from '../persistence/errors.ts';

// The system-prompt text
export { EXPERIENCES_HEADING, formatExperience, formatExperiences } from './format.ts';

// The learner
export { FinishedRun, learnExperiences } from './learn.ts';
export type { LearnedExperiences, LearnExperiencesOptions, SkippedCandidate } from './learn.ts';
export { compactTranscript } from './transcript.ts';
export type { TranscriptOptions } from './transcript.ts';
