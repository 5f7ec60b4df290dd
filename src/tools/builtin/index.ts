export { webFetch, formatFetchResult } from './webFetch.ts';
export type { WebFetchOptions } from './webFetch.ts';
export { fileRead } from './fileRead.ts';
export type { FileReadOptions } from './fileRead.ts';

export { FileReadError, WebFetchError } from './errors.ts';
export type { FileReadFailureReason, PathRefusalReason, UrlRefusalReason, WebFetchFailureReason } from './errors.ts';

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
