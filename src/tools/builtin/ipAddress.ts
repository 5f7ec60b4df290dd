/**
 * IP address parsing and classification for the SSRF guard of `web_fetch`.
 *
 * Addresses are handled as bigints (32 bits for IPv4, 128 for IPv6) so one range check covers
 * every notation: `127.0.0.1`, `2130706433`, `0x7f000001`, `017700000001`, `127.1` and
 * `::ffff:127.0.0.1` all land on the same number. Anything that is not global unicast is
 * refused — it is easier to allowlist a legitimate exception than to enumerate every way of
 * reaching an internal service.
 */
import { isIPv4, isIPv6 } from 'node:net';

/** A parsed address. IPv4-mapped IPv6 stays version 6 here; {@link embeddedIPv4} unwraps it. */
export interface ParsedAddress {
  readonly version: 4 | 6;
  readonly value: bigint;
}

/** Why an address is (not) reachable. Only `public` may be fetched without an allowlist entry. */
export type AddressClass =
  | 'public'
  | 'loopback'
  | 'private'
  | 'shared'
  | 'link_local'
  | 'unspecified'
  | 'unique_local'
  | 'multicast'
  | 'documentation'
  | 'reserved'
  | 'invalid';

/** A CIDR block such as `10.0.0.0/8` or `fc00::/7`. */
export interface Cidr {
  readonly version: 4 | 6;
  readonly base: bigint;
  readonly bits: number;
}

const IPV4_PART = /^(?:0x[0-9a-f]*|0[0-7]*|[1-9][0-9]*)$/i;

/**
 * Parse an IPv4 address the way `inet_aton` (and so many HTTP clients) does: 1–4 parts, each
 * decimal, hex (`0x7f`) or octal (`0177`); the last part fills the remaining bytes. That is
 * exactly the set of spellings attackers use to slip `127.0.0.1` past string checks.
 *
 * @example
 * ```ts
 * parseIPv4('2130706433'); // 2130706433n (127.0.0.1)
 * parseIPv4('127.1');      // 2130706433n
 * parseIPv4('example');    // undefined
 * ```
 */
export function parseIPv4(text: string): bigint | undefined {
  const parts = text.split('.');
  if (parts.length > 4 || parts.some((part) => !IPV4_PART.test(part))) return undefined;
  const numbers = parts.map((part) => {
    if (/^0x/i.test(part)) return part.length === 2 ? 0n : BigInt(part);
    if (part.length > 1 && part.startsWith('0')) return BigInt(`0o${part.slice(1)}`);
    return BigInt(part);
  });
  let value = 0n;
  for (let index = 0; index < numbers.length - 1; index += 1) {
    const byte = numbers[index]!;
    if (byte > 255n) return undefined;
    value = (value << 8n) | byte;
  }
  const restBits = BigInt(8 * (5 - numbers.length));
  const last = numbers[numbers.length - 1]!;
  if (last >= 1n << restBits) return undefined;
  return (value << restBits) | last;
}

function parseIPv6(text: string): bigint | undefined {
  let body = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  const zone = body.indexOf('%');
  if (zone >= 0) body = body.slice(0, zone);
  if (!isIPv6(body)) return undefined;
  const lastColon = body.lastIndexOf(':');
  const tail = body.slice(lastColon + 1);
  if (tail.includes('.')) {
    const v4 = parseIPv4(tail);
    if (v4 === undefined) return undefined;
    body = `${body.slice(0, lastColon + 1)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const [head = '', rest] = body.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = rest === undefined || rest === '' ? [] : rest.split(':');
  const groups = rest === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  if (groups.length !== 8) return undefined;
  return groups.reduce((value, group) => (value << 16n) | BigInt(`0x${group}`), 0n);
}

/**
 * Parse an IP literal: loose IPv4 (see {@link parseIPv4}) or IPv6, with or without brackets and
 * zone id. `undefined` for anything else (host names).
 *
 * @example
 * ```ts
 * parseAddress('[::ffff:127.0.0.1]'); // { version: 6, value: 281472812449793n }
 * parseAddress('0x7f000001');         // { version: 4, value: 2130706433n }
 * ```
 */
export function parseAddress(text: string): ParsedAddress | undefined {
  const v4 = isIPv4(text) || /^[0-9a-fx.]+$/i.test(text) ? parseIPv4(text) : undefined;
  if (v4 !== undefined) return { version: 4, value: v4 };
  const v6 = parseIPv6(text);
  return v6 === undefined ? undefined : { version: 6, value: v6 };
}

/**
 * Parse `a.b.c.d/n`, `v6::/n` or a bare address (a /32 or /128 block).
 *
 * @example
 * ```ts
 * parseCidr('10.0.0.0/8'); // { version: 4, base: 167772160n, bits: 8 }
 * parseCidr('nope');       // undefined
 * ```
 */
export function parseCidr(text: string): Cidr | undefined {
  const [addressText = '', bitsText, extra] = text.trim().split('/');
  if (extra !== undefined) return undefined;
  const address = isIPv4(addressText) ? { version: 4 as const, value: parseIPv4(addressText)! } : parseIPv6Address(addressText);
  if (address === undefined) return undefined;
  const width = address.version === 4 ? 32 : 128;
  const bits = bitsText === undefined ? width : /^\d{1,3}$/.test(bitsText) ? Number(bitsText) : NaN;
  if (!(bits >= 0 && bits <= width)) return undefined;
  const hostBits = BigInt(width - bits);
  return { version: address.version, base: (address.value >> hostBits) << hostBits, bits };
}

function parseIPv6Address(text: string): ParsedAddress | undefined {
  const value = parseIPv6(text);
  return value === undefined ? undefined : { version: 6, value };
}

/**
 * True when `address` lies in `cidr`. An IPv4-mapped IPv6 address matches IPv4 blocks, so an
 * allowlisted `127.0.0.1` also covers `::ffff:127.0.0.1`.
 *
 * @example
 * ```ts
 * cidrContains(parseCidr('10.0.0.0/8')!, parseAddress('10.1.2.3')!); // true
 * ```
 */
export function cidrContains(cidr: Cidr, address: ParsedAddress): boolean {
  const candidate = cidr.version === 4 && address.version === 6 ? embeddedIPv4(address) : address;
  if (candidate === undefined || candidate.version !== cidr.version) return false;
  const hostBits = BigInt((cidr.version === 4 ? 32 : 128) - cidr.bits);
  return candidate.value >> hostBits === cidr.base >> hostBits;
}

/**
 * The IPv4 address an IPv6 address carries and routes to: IPv4-mapped (`::ffff:a.b.c.d`),
 * NAT64 (`64:ff9b::/96`) and 6to4 (`2002::/16`). `undefined` for other addresses.
 *
 * @example
 * ```ts
 * embeddedIPv4(parseAddress('::ffff:127.0.0.1')!); // { version: 4, value: 2130706433n }
 * ```
 */
export function embeddedIPv4(address: ParsedAddress): ParsedAddress | undefined {
  if (address.version === 4) return address;
  const value = address.value;
  if (value >> 32n === 0xffffn || value >> 32n === 0x64ff9b0000000000000000n) return { version: 4, value: value & 0xffffffffn };
  if (value >> 112n === 0x2002n) return { version: 4, value: (value >> 80n) & 0xffffffffn };
  return undefined;
}

const block = (text: string): Cidr => parseCidr(text)!;

// Checked in order; the first match wins. Everything not listed is public.
const IPV4_RANGES: ReadonlyArray<readonly [Cidr, AddressClass]> = [
  [block('0.0.0.0/8'), 'unspecified'],
  [block('10.0.0.0/8'), 'private'],
  [block('100.64.0.0/10'), 'shared'],
  [block('127.0.0.0/8'), 'loopback'],
  [block('169.254.0.0/16'), 'link_local'],
  [block('172.16.0.0/12'), 'private'],
  [block('192.0.0.0/24'), 'reserved'],
  [block('192.0.2.0/24'), 'documentation'],
  [block('192.88.99.0/24'), 'reserved'],
  [block('192.168.0.0/16'), 'private'],
  [block('198.18.0.0/15'), 'reserved'],
  [block('198.51.100.0/24'), 'documentation'],
  [block('203.0.113.0/24'), 'documentation'],
  [block('224.0.0.0/4'), 'multicast'],
  [block('240.0.0.0/4'), 'reserved'],
];

const IPV6_RANGES: ReadonlyArray<readonly [Cidr, AddressClass]> = [
  [block('::/128'), 'unspecified'],
  [block('::1/128'), 'loopback'],
  [block('64:ff9b:1::/48'), 'private'],
  [block('100::/64'), 'reserved'],
  [block('2001::/23'), 'reserved'],
  [block('2001:db8::/32'), 'documentation'],
  [block('fc00::/7'), 'unique_local'],
  [block('fe80::/10'), 'link_local'],
  [block('fec0::/10'), 'private'],
  [block('ff00::/8'), 'multicast'],
];

const GLOBAL_UNICAST_V6 = block('2000::/3');

/**
 * Classify an IP literal (any notation {@link parseAddress} accepts). Addresses that carry an
 * IPv4 address (mapped, NAT64, 6to4) are classified by it; IPv6 outside `2000::/3` is reserved.
 *
 * @example
 * ```ts
 * classifyAddress('169.254.169.254'); // 'link_local'
 * classifyAddress('::ffff:127.0.0.1'); // 'loopback'
 * classifyAddress('2606:4700::1111');  // 'public'
 * ```
 */
export function classifyAddress(text: string | ParsedAddress): AddressClass {
  const address = typeof text === 'string' ? parseAddress(text) : text;
  if (address === undefined) return 'invalid';
  const v4 = embeddedIPv4(address);
  const ranges = v4 === undefined ? IPV6_RANGES : IPV4_RANGES;
  const candidate = v4 ?? address;
  for (const [range, kind] of ranges) if (cidrContains(range, candidate)) return kind;
  if (candidate.version === 6 && !cidrContains(GLOBAL_UNICAST_V6, candidate)) return 'reserved';
  return 'public';
}

/**
 * Shorthand for `classifyAddress(text) === 'public'`.
 *
 * @example
 * ```ts
 * isPublicAddress('93.184.216.34'); // true
 * isPublicAddress('10.0.0.1');      // false
 * ```
 */
export function isPublicAddress(text: string | ParsedAddress): boolean {
  return classifyAddress(text) === 'public';
}
