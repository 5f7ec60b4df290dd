/**
 * Built-in tools: `web_fetch` (SSRF-guarded) and `file_read` (confined to a
 * root), plus the pieces they are built from for callers who need their own.
 *
 * @example
 * ```ts
 * import { fileRead, webFetch } from './tools/builtin/index.ts';
 * const tools = [webFetch(), fileRead({ root: process.cwd() })];
 * ```
 */

// Tools
export { webFetch, formatFetchResult } from './webFetch.ts';
export type { WebFetchOptions } from './webFetch.ts';
export { fileRead } from './fileRead.ts';
export type { FileReadOptions } from './fileRead.ts';

// Errors
export { FileReadError, WebFetchError } from './errors.ts';
export type { FileReadFailureReason, PathRefusalReason, UrlRefusalReason, WebFetchFailureReason } from './errors.ts';

// Building blocks
export { fetchUrl } from './fetchUrl.ts';
export type { FetchUrlOptions, FetchUrlResult } from './fetchUrl.ts';
export { createHostPolicy } from './hostPolicy.ts';
export type { HostPolicy, HostPolicyOptions } from './hostPolicy.ts';
export { guardedLookup, systemResolveHost } from './guardedLookup.ts';
export type { ResolveHost } from './guardedLookup.ts';
export { classifyAddress, isPublicAddress, parseAddress, parseCidr, cidrContains, embeddedIPv4, parseIPv4 } from './ipAddress.ts';
export type { AddressClass, Cidr, ParsedAddress } from './ipAddress.ts';
export { confinePath, confinedRoot, isInside, lexicalPath } from './confinePath.ts';
export type { ConfinedRoot } from './confinePath.ts';
