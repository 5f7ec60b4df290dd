/**
 * A failed persist undoes its change, so what `relevant()` sees is what the file holds. Retrieval reuses
 * the knowledge index, with the condition in the heavily weighted field since it says when a rule applies.
 */
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { ConfigurationError } from '../core/errors.ts';
import { KnowledgeIndex } from '../knowledge/searchIndex.ts';
import { collectTerms } from '../knowledge/terms.ts';
import { createChangeQueue, type Change } from '../persistence/changeQueue.ts';
import { EXPERIENCE_DEFAULTS } from './defaults.ts';
import {
  experienceKey,
  appliesIn,
  scopeKey,
  successRateOf,
  type Experience,
  type ExperienceOutcome,
  type ExperienceScope,
  type ExperienceStatus,
  type NewExperience,
} from './experience.ts';
import { cleanCandidate, normaliseScope, type Redact } from './prepare.ts';
import { StoreError } from '../persistence/errors.ts';

export interface ExperienceAddOptions {
  /** `pending` (default: waits for `accept`) or `active` (retrieved at once). */
  readonly status?: ExperienceStatus;
}

export interface ExperienceOutcomeOptions {
  /** Counted once per experience, however often it is recorded. */
  readonly runId?: string;
}

export interface ExperienceListFilter {
  readonly status?: ExperienceStatus;
  /** Exactly this scope; a project path is compared as stored, resolved. */
  readonly scope?: ExperienceScope;
}

export interface ExperienceRelevantOptions {
  /** Default 5. */
  readonly topK?: number;
  /** Project-scoped experiences apply inside it. */
  readonly project?: string;
  /** Tool-scoped experiences apply when their tool is among them. */
  readonly tools?: readonly string[];
  /** Least relevance (0..1). Default 0.1. */
  readonly minRelevance?: number;
}

export interface ExperienceStore {
  readonly size: number;
  get(id: string): Experience | undefined;
  list(filter?: ExperienceListFilter): Experience[];
  /**
 * One with the same condition and rule in the same scope is merged instead. Every string passes
 * through `redact` first; an invalid candidate rejects with a ConfigurationError.
 */
  add(candidate: NewExperience, options?: ExperienceAddOptions): Promise<Experience>;
  /** Rejects with StoreError (`experience_not_found`) for an unknown id. */
  accept(id: string): Promise<Experience>;
  remove(id: string): Promise<boolean>;
  /** Active experiences that apply (see `scopeApplies`) and match `task`, at most `topK`. */
  relevant(task: string, options?: ExperienceRelevantOptions): Experience[];
  /**
 * Each experience is counted once however often listed; with `runId`, one that already counted that run
 * is skipped, so a run that ends again after a crash is counted once. Unknown ids are skipped.
 */
  recordOutcome(ids: readonly string[], outcome: ExperienceOutcome, options?: ExperienceOutcomeOptions): Promise<Experience[]>;
  /** Later changes reject. */
  close(): Promise<void>;
}

export interface ExperiencePersistence {
  save(items: readonly Experience[]): Promise<void>;
  close(): void;
}

export type SeedExperience = NewExperience & { readonly status?: ExperienceStatus };

export interface ExperienceStoreOptions {
  /** Applied to every string before it is stored (e.g. `createRedactor().text`). */
  readonly redact?: Redact;
}

/**
 * Seeds are active unless they say otherwise: whoever seeds a store in code vouches for it.
 * @example
 * const store = createMemoryExperienceStore([{ condition: 'a migration fails', rule: 'roll back first', confidence: 0.9 }]);
 */
export function createMemoryExperienceStore(initial: readonly SeedExperience[] = [], options: ExperienceStoreOptions = {}): ExperienceStore {
  const store = buildExperienceStore([], options);
  // Synchronous seeding: nothing to persist, and callers want the experiences retrievable at once.
  for (const { status, ...candidate } of initial) store.seed(candidate, status ?? 'active');
  return store;
}

export function buildExperienceStore(
  initial: readonly Experience[],
  options: ExperienceStoreOptions & { readonly persistence?: ExperiencePersistence },
): ExperienceStore & { seed(candidate: NewExperience, status: ExperienceStatus): void } {
  const redact = options.redact ?? ((text: string) => text);
  const persistence = options.persistence;
  const byId = new Map<string, Experience>();
  /** Condition + rule + scope → id: what makes two experiences the same. */
  const byKey = new Map<string, string>();
  const index = new KnowledgeIndex();
  const queue = createChangeQueue(
    () =>
      new StoreError('experience_store_closed', 'The experience store is closed. Open it again (openExperienceStore) before adding, accepting, removing or recording outcomes.'),
  );
  const save = persistence === undefined ? undefined : () => persistence.save([...byId.values()]);

  /** An update keeps the same text, so only a new item touches the index. */
  const put = (item: Experience): void => {
    const reindex = !byId.has(item.id);
    byId.set(item.id, item);
    byKey.set(experienceKey(item), item.id);
    // The index takes knowledge items; the fields weigh condition double, rule single.
    if (reindex) index.add({ id: item.id, subject: item.condition, predicate: '', object: item.rule, confidence: item.confidence, createdAt: item.createdAt });
  };
  const drop = (id: string): void => {
    const item = byId.get(id);
    if (item === undefined) return;
    byId.delete(id);
    if (byKey.get(experienceKey(item)) === id) byKey.delete(experienceKey(item));
    index.discard(id);
  };
  const upsert = (fresh: Experience): { item: Experience; existing: Experience | undefined } => {
    const existingId = byKey.get(experienceKey(fresh));
    const existing = existingId === undefined ? undefined : byId.get(existingId);
    const item = freeze(existing === undefined ? fresh : merge(existing, fresh));
    put(item);
    return { item, existing };
  };
  for (const item of initial) put(freeze({ ...item }));

  const restore = (items: readonly Experience[]): void => {
    for (const item of items) byId.set(item.id, item);
  };

  return {
    get size() {
      return byId.size;
    },
    get: (id) => byId.get(id),
    list(filter = {}) {
      const key = filter.scope === undefined ? undefined : scopeKey(normaliseScope(filter.scope, redact));
      return [...byId.values()].filter((e) => (filter.status === undefined || e.status === filter.status) && (key === undefined || scopeKey(e.scope) === key));
    },
    seed: (candidate, status) => void upsert(cleanCandidate(candidate, redact, Date.now(), newId(), status)),
    add(candidate, addOptions = {}) {
      return queue.change(
        (fresh): Change<Experience> => {
          const { item, existing } = upsert(fresh);
          return { result: item, write: save, undo: () => (existing === undefined ? drop(item.id) : restore([existing])) };
        },
        () => cleanCandidate(candidate, redact, Date.now(), newId(), addOptions.status ?? 'pending'),
      );
    },
    accept(id) {
      return queue.change((): Change<Experience> => {
        const existing = byId.get(id);
        if (existing === undefined) throw notFound(id);
        if (existing.status === 'active') return { result: existing };
        const item = freeze({ ...existing, status: 'active', updatedAt: Date.now() });
        put(item);
        return { result: item, write: save, undo: () => restore([existing]) };
      });
    },
    remove(id) {
      return queue.change((): Change<boolean> => {
        const existing = byId.get(id);
        if (existing === undefined) return { result: false };
        drop(id);
        return { result: true, write: save, undo: () => put(existing) };
      });
    },
    relevant(task, relevantOptions = {}) {
      const topK = relevantOptions.topK ?? EXPERIENCE_DEFAULTS.topK;
      const minRelevance = relevantOptions.minRelevance ?? EXPERIENCE_DEFAULTS.minRelevance;
      if (!(Number.isInteger(topK) && topK >= 0)) throw new ConfigurationError(`relevant() topK must be a non-negative integer (got ${String(topK)}).`);
      if (!(minRelevance >= 0 && minRelevance <= 1)) throw new ConfigurationError(`relevant() minRelevance must be between 0 and 1 (got ${String(minRelevance)}).`);
      const terms = new Set<string>();
      collectTerms(task.slice(0, EXPERIENCE_DEFAULTS.maxTaskChars), terms, EXPERIENCE_DEFAULTS.maxQueryTerms);
      if (topK === 0 || terms.size === 0) return [];
      const project = relevantOptions.project === undefined ? undefined : resolve(relevantOptions.project);
      const tools = new Set(relevantOptions.tools ?? []);
      const accept = (id: string): boolean => {
        const item = byId.get(id);
        return item !== undefined && item.status === 'active' && appliesIn(item.scope, project, tools);
      };
      const results: Experience[] = [];
      for (const hit of index.search([...terms], accept)) {
        // Sorted by relevance: the first one under the bar ends the list.
        if (results.length >= topK || hit.relevance < minRelevance) break;
        const item = byId.get(hit.id);
        if (item !== undefined) results.push(item);
      }
      return results;
    },
    recordOutcome(ids, outcome, outcomeOptions = {}) {
      const { runId } = outcomeOptions;
      if (outcome !== 'success' && outcome !== 'failure') {
        return Promise.reject(new ConfigurationError(`recordOutcome() outcome must be 'success' or 'failure' (got ${String(outcome)}).`));
      }
      return queue.change((): Change<Experience[]> => {
        const before: Experience[] = [];
        const after: Experience[] = [];
        const now = Date.now();
        for (const id of new Set(ids)) {
          const existing = byId.get(id);
          if (existing === undefined || (runId !== undefined && existing.countedRunIds?.includes(runId) === true)) continue;
          const usageCount = existing.usageCount + 1;
          const successCount = existing.successCount + (outcome === 'success' ? 1 : 0);
          const counted = runId === undefined ? {} : { countedRunIds: union(existing.countedRunIds ?? [], [runId], EXPERIENCE_DEFAULTS.maxCountedRunIds) };
          const item = freeze({ ...existing, usageCount, successCount, successRate: successRateOf(usageCount, successCount), ...counted, updatedAt: now });
          put(item);
          before.push(existing);
          after.push(item);
        }
        return { result: after, write: after.length > 0 ? save : undefined, undo: () => restore(before) };
      });
    },
    close: () => queue.close(() => persistence?.close()),
  };
}

function merge(existing: Experience, fresh: Experience): Experience {
  return {
    ...existing,
    evidence: union(existing.evidence, fresh.evidence, EXPERIENCE_DEFAULTS.maxEvidence),
    sourceRunIds: union(existing.sourceRunIds, fresh.sourceRunIds, EXPERIENCE_DEFAULTS.maxSourceRunIds),
    confidence: Math.max(existing.confidence, fresh.confidence),
    // Never demoted: an accepted rule stays accepted when a later run proposes it again.
    status: existing.status === 'active' || fresh.status === 'active' ? 'active' : 'pending',
    updatedAt: fresh.updatedAt,
  };
}

/** Keeps the newest `max`. */
function union(a: readonly string[], b: readonly string[], max: number): string[] {
  const all = [...new Set([...a, ...b])];
  return all.slice(Math.max(0, all.length - max));
}

/** What the store hands out is its own state. */
function freeze(item: Experience): Experience {
  Object.freeze(item.evidence);
  Object.freeze(item.sourceRunIds);
  if (item.countedRunIds !== undefined) Object.freeze(item.countedRunIds);
  Object.freeze(item.scope);
  return Object.freeze(item);
}

const newId = (): string => `exp_${randomUUID().replace(/-/g, '').slice(0, 16)}`;

function notFound(id: string): StoreError {
  return new StoreError('experience_not_found', `No experience has the id ${JSON.stringify(id)}. List the store (store.list()) for the ids it holds; it may have been removed.`, {
    id,
  });
}
