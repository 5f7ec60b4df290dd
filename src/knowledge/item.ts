import { z } from 'zod';

/** Readers refuse newer versions. */
export const KNOWLEDGE_VERSION = 1;

/** `conventions` are scoped by directory or language; `working` holds answers of earlier runs. */
export const KnowledgeScope = z.enum(['conventions', 'working', 'fact']);
export type KnowledgeScope = z.infer<typeof KnowledgeScope>;

export const KnowledgeItem = z.object({
  id: z.string().min(1),
  subject: z.string().min(1),
  predicate: z.string().min(1),
  object: z.string().min(1),
  confidence: z.number().min(0).max(1),
  scope: KnowledgeScope.optional(),
  /** Project-relative; `''` is the project root. */
  directory: z.string().optional(),
  language: z.string().optional(),
  createdAt: z.number(),
  /** `store_knowledge:<runId>`, `run:<runId>`, a file name … */
  source: z.string().optional(),
});
export type KnowledgeItem = z.infer<typeof KnowledgeItem>;

export const NewKnowledgeItem = KnowledgeItem.omit({ id: true, createdAt: true }).extend({
  createdAt: z.number().optional(),
});
export type NewKnowledgeItem = z.infer<typeof NewKnowledgeItem>;

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

/** Case- and whitespace-insensitive: items with the same key say the same thing. */
export function contentKey(item: Pick<KnowledgeItem, 'subject' | 'predicate' | 'object'>): string {
  return `${collapse(item.subject)}\u0000${collapse(item.predicate)}\u0000${collapse(item.object)}`;
}

/** Same content in another placement is kept apart: a convention can hold for two directories. */
export function placementKey(item: Pick<KnowledgeItem, 'scope' | 'directory' | 'language'>): string {
  return `${item.scope ?? ''}\u0000${item.directory ?? ''}\u0000${(item.language ?? '').toLowerCase()}`;
}
