import { describe, expect, it } from 'vitest';
import {
  cidrContains,
  classifyAddress,
  embeddedIPv4,
  isPublicAddress,
  parseAddress,
  parseCidr,
  parseIPv4,
} from '../../../src/tools/builtin/ipAddress.ts';

const LOOPBACK = 0x7f000001n;

describe('parseIPv4', () => {
  it.each([
    ['dotted quad', '127.0.0.1'],
    ['one decimal number', '2130706433'],
    ['one hex number', '0x7f000001'],
    ['one octal number', '017700000001'],
    ['two parts', '127.1'],
    ['three parts', '127.0.1'],
    ['hex and octal parts', '0x7f.0.0.01'],
  ])('reads the %s spelling of 127.0.0.1', (_label, text) => {
    expect(parseIPv4(text)).toBe(LOOPBACK);
  });

  it.each(['256.1.1.1', '1.2.3.4.5', '08.1.1.1', 'example', '1.2.3.4294967296', ''])('rejects %j', (text) => {
    expect(parseIPv4(text)).toBeUndefined();
  });
});

describe('classifyAddress', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['2130706433', 'loopback'],
    ['0x7f000001', 'loopback'],
    ['017700000001', 'loopback'],
    ['127.1', 'loopback'],
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['64:ff9b::127.0.0.1', 'loopback'],
    ['2002:7f00:1::', 'loopback'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['::', 'unspecified'],
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['::ffff:10.0.0.1', 'private'],
    ['100.64.0.1', 'shared'],
    ['100.127.255.255', 'shared'],
    ['169.254.169.254', 'link_local'],
    ['fe80::1', 'link_local'],
    ['fe80::1%eth0', 'link_local'],
    ['febf::1', 'link_local'],
    ['fc00::1', 'unique_local'],
    ['fd00:ec2::254', 'unique_local'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'multicast'],
    ['192.0.2.1', 'documentation'],
    ['2001:db8::1', 'documentation'],
    ['255.255.255.255', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['::127.0.0.1', 'reserved'],
    ['2001::1', 'reserved'],
    ['example.com', 'invalid'],
  ])('classifies %s as %s', (address, expected) => {
    expect(classifyAddress(address)).toBe(expected);
  });

  it.each(['93.184.216.34', '8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '2606:4700::1111', '2a00:1450:4001::200e', '::ffff:93.184.216.34'])(
    'accepts public address %s',
    (address) => {
      expect(classifyAddress(address)).toBe('public');
      expect(isPublicAddress(address)).toBe(true);
    },
  );
});

describe('parseCidr and cidrContains', () => {
  it('matches addresses inside a block and not outside it', () => {
    const block = parseCidr('10.1.0.0/16')!;
    expect(cidrContains(block, parseAddress('10.1.200.3')!)).toBe(true);
    expect(cidrContains(block, parseAddress('10.2.0.1')!)).toBe(false);
  });

  it('lets an IPv4 block match the IPv4-mapped IPv6 spelling of its addresses', () => {
    expect(cidrContains(parseCidr('127.0.0.1')!, parseAddress('::ffff:127.0.0.1')!)).toBe(true);
  });

  it('matches IPv6 blocks', () => {
    expect(cidrContains(parseCidr('fc00::/7')!, parseAddress('fdff::1')!)).toBe(true);
    expect(cidrContains(parseCidr('fc00::/7')!, parseAddress('fe00::1')!)).toBe(false);
  });

  it.each(['10.0.0.0/33', '10.0.0.0/x', 'host/8', '1/2/3', '::/129'])('rejects malformed block %j', (text) => {
    expect(parseCidr(text)).toBeUndefined();
  });

  it('unwraps the IPv4 address that NAT64 and 6to4 addresses carry', () => {
    expect(embeddedIPv4(parseAddress('64:ff9b::a00:1')!)).toEqual({ version: 4, value: 0x0a000001n });
    expect(embeddedIPv4(parseAddress('2606:4700::1111')!)).toBeUndefined();
  });
});
