import { isIPv4, isIPv6 } from 'node:net';

/** IPv4-mapped IPv6 stays version 6 here; {@link embeddedIPv4} unwraps it. */
export interface ParsedAddress {
  readonly version: 4 | 6;
  readonly value: bigint;
}

/** Only `public` may be fetched without an allowlist entry. */
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

export interface Cidr {
  readonly version: 4 | 6;
  readonly base: bigint;
  readonly bits: number;
}

const IPV4_PART = /^(?:0x[0-9a-f]*|0[0-7]*|[1-9][0-9]*)$/i;

/**
 * Parses like `inet_aton` (1–4 parts, decimal, hex or octal; the last part fills the rest): the
 * spellings attackers use to slip `127.0.0.1` past string checks.
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

export function parseAddress(text: string): ParsedAddress | undefined {
  const v4 = isIPv4(text) || /^[0-9a-fx.]+$/i.test(text) ? parseIPv4(text) : undefined;
  if (v4 !== undefined) return { version: 4, value: v4 };
  const v6 = parseIPv6(text);
  return v6 === undefined ? undefined : { version: 6, value: v6 };
}

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

/** An IPv4-mapped IPv6 address matches IPv4 blocks, so an allowlisted `127.0.0.1` also covers `::ffff:127.0.0.1`. */
export function cidrContains(cidr: Cidr, address: ParsedAddress): boolean {
  const candidate = cidr.version === 4 && address.version === 6 ? embeddedIPv4(address) : address;
  if (candidate === undefined || candidate.version !== cidr.version) return false;
  const hostBits = BigInt((cidr.version === 4 ? 32 : 128) - cidr.bits);
  return candidate.value >> hostBits === cidr.base >> hostBits;
}

/** The IPv4 address an IPv6 address routes to: IPv4-mapped, NAT64 (`64:ff9b::/96`) or 6to4 (`2002::/16`). */
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

/** Addresses carrying an IPv4 address are classified by it; IPv6 outside `2000::/3` is reserved. */
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

export function isPublicAddress(text: string | ParsedAddress): boolean {
  return classifyAddress(text) === 'public';
}
