/**
 * Pre-hydration: resolve the references a task mentions before the first model call.
 *
 * @example
 * ```ts
 * import { createPreHydrator } from './hydration/index.ts';
 * const hydrator = createPreHydrator({ resolvers: { url: webFetch(), file: fileRead({ root: '.' }) } });
 * ```
 */

export { createPreHydrator } from './createPreHydrator.ts';
export type { PreHydratorOptions } from './createPreHydrator.ts';
export { extractReferences } from './references.ts';
export type { ExtractOptions, Reference, ReferencePattern } from './references.ts';
export type { ReferenceResolver, ReferenceResolvers, ResolveContext, ResolverFunction, ToolResolver } from './resolvers.ts';
export { resolverTable } from './resolvers.ts';
export { resolveAll } from './resolveAll.ts';
export type { ResolutionOutcome, ResolveAllOptions } from './resolveAll.ts';
export { estimateTokens, fairShares, trimMarker, trimToShare } from './budget.ts';
export { PRE_HYDRATED_CONTEXT_TAG, describeReference, formatPreHydratedContext } from './format.ts';
export type { ContextBlock, UnavailableReference } from './format.ts';
export { PreHydrationTimeoutError } from './errors.ts';
