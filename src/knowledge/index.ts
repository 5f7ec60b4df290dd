export { contentKey, KNOWLEDGE_VERSION, KnowledgeDocument, KnowledgeItem, KnowledgeScope, NewKnowledgeItem, placementKey } from './item.ts';

export { createMemoryKnowledgeStore } from './store.ts';
export type { KnowledgeAddOptions, KnowledgeSearchOptions, KnowledgeStore, ScoredKnowledgeItem } from './store.ts';
export { openKnowledgeStore } from './fileStore.ts';
export type { KnowledgeFileOptions } from './fileStore.ts';
export { StoreError } from '../persistence/errors.ts';

export { collectTerms, stem, STOP_WORDS, termsOf } from './terms.ts';
export { directoryChain, normaliseDirectory } from './directory.ts';

export { createKnowledgeBridge, isKnowledgeContext, KNOWLEDGE_CONTEXT_MARKER, knowledgeSearchTerms, renderKnowledgeContext } from './bridge.ts';
export type { KnowledgeBridgeOptions } from './bridge.ts';
export { resolveConventions } from './conventions.ts';
export type { ConventionLevel, ConventionQuery, ScopedConvention } from './conventions.ts';
export { createKnowledgeTools, createRecallKnowledgeTool, createStoreKnowledgeTool, RECALL_KNOWLEDGE, STORE_KNOWLEDGE } from './tools.ts';
export type { KnowledgeToolOptions } from './tools.ts';
export { ANSWERED, rememberResult } from './remember.ts';
export type { RememberOptions } from './remember.ts';
export { formatKnowledgeItem } from './format.ts';
export { createKnowledge } from './wiring.ts';
export type { KnowledgeConfig, KnowledgeParts } from './wiring.ts';
