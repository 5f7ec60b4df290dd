/**
 * A knowledge item: one subject–predicate–object triple with a confidence, where it applies
 * (scope, directory, language) and where it came from. The schema and the type share a name;
 * the store document carries a schema version like every persisted record.
 */
import { z } from 'zod';

/**
 * Version of the knowledge document; readers refuse newer ones.
 *
 * @example
 * ```ts
 * const empty: KnowledgeDocument = { v: KNOWLEDGE_VERSION, items: [] };
 * ```
 */
export const KNOWLEDGE_VERSION = 1;

/**
 * What kind of knowledge an item is: a coding `conventions` entry (scoped by directory or
 * language), `working` memory (answers of earlier runs), or a plain `fact`.
 *
 * @example
 * ```ts
 * KnowledgeScope.parse('conventions'); // 'conventions'
 * ```
 */
export const KnowledgeScope = z.enum(['conventions', 'working', 'fact']);
export type KnowledgeScope = z.infer<typeof KnowledgeScope>;

/**
 * One stored item.
 *
 * @example
 * ```ts
 * const item: KnowledgeItem = {
 *   id: 'k_1', subject: 'Earth', predicate: 'has', object: 'one moon', confidence: 0.95,
 *   scope: 'fact', createdAt: Date.now(), source: 'store_knowledge:run_1',
 * };
 * ```
 */
export const KnowledgeItem = z.object({
  id: z.string().min(1),
  subject: z.string().min(1),
  predicate: z.string().min(1),
  object: z.string().min(1),
  confidence: z.number().min(0).max(1),
  scope: KnowledgeScope.optional(),
  /** Project-relative directory a convention applies to (`''` is the project root). */
  directory: z.string().optional(),
  /** Language a convention applies to (`typescript`, `rust`, …). */
  language: z.string().optional(),
  /** Milliseconds since the epoch. */
  createdAt: z.number(),
  /** Who stored it (`store_knowledge:<runId>`, `run:<runId>`, a file name …). */
  source: z.string().optional(),
});
export type KnowledgeItem = z.infer<typeof KnowledgeItem>;

/**
 * What `store.add` takes: an item without the fields the store assigns.
 *
 * @example
 * ```ts
 * await store.add({ subject: 'src/api', predicate: 'validates input with', object: 'zod', confidence: 0.9,
 *   scope: 'conventions', directory: 'src/api' });
 * ```
 */
export const NewKnowledgeItem = KnowledgeItem.omit({ id: true, createdAt: true }).extend({
  createdAt: z.number().optional(),
});
export type NewKnowledgeItem = z.infer<typeof NewKnowledgeItem>;

/**
 * The whole store file: `{ v, items }`.
 *
 * @example
 * ```ts
 * KnowledgeDocument.parse({ v: 1, items: [] });
 * ```
 */
export const KnowledgeDocument = z.object({
  v: z.literal(KNOWLEDGE_VERSION),
  items: z.array(KnowledgeItem).superRefine((items, ctx) => {
    const seen = new Set<string>();
    for (const [i, item] of items.entries()) {
      if (seen.has(item.id)) ctx.addIssue({ code: 'custom', path: [i, 'id'], message: `duplicate id ${item.id}` });
      seen.add(item.id);
    }
  }),
});
export type KnowledgeDocument = z.infer<typeof KnowledgeDocument>;

const collapse = (text: string): string => text.trim().replace(/\s+/g, ' ').toLowerCase();

/**
 * The identity of an item's content: subject, predicate and object, case- and
 * whitespace-insensitive. Items with the same key say the same thing.
 *
 * @example
 * ```ts
 * contentKey({ subject: 'Earth', predicate: 'has', object: 'one  moon' }) ===
 *   contentKey({ subject: 'earth', predicate: 'HAS', object: 'one moon' }); // true
 * ```
 */
export function contentKey(item: Pick<KnowledgeItem, 'subject' | 'predicate' | 'object'>): string {
  return `${collapse(item.subject)}\u0000${collapse(item.predicate)}\u0000${collapse(item.object)}`;
}

/**
 * Where an item applies: two items with the same content but different placement are both
 * kept (the same convention can hold for two directories).
 *
 * @example
 * ```ts
 * placementKey({ scope: 'conventions', directory: 'src/api' }); // 'conventions\u0000src/api\u0000'
 * ```
 */
export function placementKey(item: Pick<KnowledgeItem, 'scope' | 'directory' | 'language'>): string {
  return `${item.scope ?? ''}\u0000${item.directory ?? ''}\u0000${(item.language ?? '').toLowerCase()}`;
}
