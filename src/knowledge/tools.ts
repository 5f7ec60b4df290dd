/** Ordinary `defineTool` tools, so the gate, breakers and tool profile apply to them like to any other. */
import { z } from 'zod';
import { DEFAULTS } from '../core/defaults.ts';
import { defineTool } from '../tools/defineTool.ts';
import type { Tool } from '../tools/types.ts';
import { resolveConventions, type ConventionLevel } from './conventions.ts';
import { formatKnowledgeItem, oneLine } from './format.ts';
import { KnowledgeScope, type KnowledgeItem } from './item.ts';
import type { KnowledgeStore, ScoredKnowledgeItem } from './store.ts';

/** The bridge skips these tools' results when building search terms. */
export const RECALL_KNOWLEDGE = 'recall_knowledge';
export const STORE_KNOWLEDGE = 'store_knowledge';

export interface KnowledgeToolOptions {
  /** Results of `recall_knowledge` without a `limit`. Default 5. */
  readonly recallLimit?: number;
  /** Least relevance of a plain (unscoped) recall result. Default 0.1. */
  readonly recallMinRelevance?: number;
  /** Characters of a subject or object shown. Default 300. */
  readonly maxItemChars?: number;
}

/** With `directory` it resolves conventions (directory → parents → root → language), so `scope` must be `conventions` or absent. */
export function createRecallKnowledgeTool(store: KnowledgeStore, options: KnowledgeToolOptions = {}): Tool {
  const defaultLimit = options.recallLimit ?? DEFAULTS.knowledge.recallLimit;
  const minRelevance = options.recallMinRelevance ?? DEFAULTS.knowledge.recallMinRelevance;
  const maxItemChars = options.maxItemChars ?? DEFAULTS.knowledge.maxItemChars;
  const input = z
    .object({
      query: z.string().trim().min(1).max(2_000).describe('What to look for: keywords, a question, or a language name for conventions.'),
      limit: z.number().int().min(1).max(DEFAULTS.knowledge.maxRecallLimit).optional().describe(`Most results (default ${defaultLimit}).`),
      directory: z
        .string()
        .min(1)
        .max(1_000)
        .optional()
        .describe('Project-relative directory (e.g. "src/api/handlers"): recall the conventions that apply there, including its parents and the language level.'),
      scope: KnowledgeScope.optional().describe('"conventions", "working" (answers of earlier runs) or "fact". Omit to search everything.'),
    })
    .refine((args) => args.directory === undefined || args.scope === undefined || args.scope === 'conventions', {
      message: 'directory only applies to scope "conventions"; drop directory, or set scope to "conventions"',
      path: ['directory'],
    });
  return defineTool({
    name: RECALL_KNOWLEDGE,
    description:
      'Search the knowledge store: facts stored earlier, answers of earlier runs, and coding conventions. ' +
      'Give a directory (with scope "conventions") to get the conventions that apply to that directory.',
    input,
    execute: ({ query, limit = defaultLimit, directory, scope }) => {
      if (directory !== undefined) {
        const found = resolveConventions(store, { directory, query, limit });
        return render(found, `conventions for ${oneLine(directory, 200)} (query "${oneLine(query, 200)}")`, maxItemChars);
      }
      const found = store.search(query, {
        limit,
        minRelevance,
        ...(scope === undefined ? {} : { filter: (item: KnowledgeItem) => item.scope === scope }),
      });
      return render(found, `"${oneLine(query, 200)}"${scope === undefined ? '' : ` in scope ${scope}`}`, maxItemChars);
    },
  });
}

/** Storing the same fact again refreshes it, so a re-run after a crash is harmless. */
export function createStoreKnowledgeTool(store: KnowledgeStore, options: KnowledgeToolOptions = {}): Tool {
  const maxItemChars = options.maxItemChars ?? DEFAULTS.knowledge.maxItemChars;
  return defineTool({
    name: STORE_KNOWLEDGE,
    description:
      'Remember a fact for later runs as a subject–predicate–object triple, with your confidence from 0 to 1. ' +
      'Example: { "subject": "Earth", "predicate": "has", "object": "one moon", "confidence": 0.95 }.',
    input: z.object({
      subject: z.string().trim().min(1).max(500),
      predicate: z.string().trim().min(1).max(200),
      object: z.string().trim().min(1).max(4_000),
      confidence: z.number().min(0).max(1),
    }),
    // What it stores is shown to later runs as system text: in a tainted run it waits like any side effect.
    sideEffects: true,
    execute: async (fact, context) => {
      const item = await store.add({ ...fact, scope: 'fact', source: `${STORE_KNOWLEDGE}:${context.runId}` });
      return `Stored ${item.id}: ${formatKnowledgeItem(item, maxItemChars)}`;
    },
  });
}

export function createKnowledgeTools(store: KnowledgeStore, options: KnowledgeToolOptions = {}): [Tool, Tool] {
  return [createRecallKnowledgeTool(store, options), createStoreKnowledgeTool(store, options)];
}

const LEVEL_LABEL: Readonly<Record<ConventionLevel, string>> = {
  directory: 'this directory',
  parent: 'a parent directory',
  root: 'project root',
  language: 'language level',
};

function render(found: readonly (ScoredKnowledgeItem & { level?: ConventionLevel })[], what: string, maxItemChars: number): string {
  if (found.length === 0) return `No knowledge found for ${what}.`;
  const lines = found.map((hit, i) => {
    const level = hit.level === undefined ? '' : `, from ${LEVEL_LABEL[hit.level]}`;
    return `${i + 1}. ${formatKnowledgeItem(hit.item, maxItemChars)} [id ${hit.item.id}, relevance ${hit.relevance.toFixed(2)}${level}]`;
  });
  return `${found.length} item${found.length === 1 ? '' : 's'} for ${what}:\n${lines.join('\n')}`;
}
