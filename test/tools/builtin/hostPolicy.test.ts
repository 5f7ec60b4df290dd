import type { LookupAddress } from 'node:dns';
import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../../src/core/errors.ts';
import { guardedLookup } from '../../../src/tools/builtin/guardedLookup.ts';
import { createHostPolicy } from '../../../src/tools/builtin/hostPolicy.ts';
import { WebFetchError } from '../../../src/tools/builtin/errors.ts';

function refusal(run: () => unknown): WebFetchError {
  try {
    run();
  } catch (error) {
    if (error instanceof WebFetchError && error.code === 'url_refused') return error;
    throw error;
  }
  throw new Error('expected a url_refused WebFetchError');
}

/** Call a LookupFunction the way net.connect does and collect its answer. */
function lookupOnce(
  lookup: ReturnType<typeof guardedLookup>,
  hostname: string,
  options: { all?: boolean; family?: number } = {},
): Promise<{ error: Error | null; address: string | LookupAddress[]; family?: number }> {
  return new Promise((resolve) => lookup(hostname, options, (error, address, family) => resolve({ error, address, family })));
}

describe('host policy', () => {
  const policy = createHostPolicy();

  it.each([
    ['http://127.0.0.1/', 'private_address'],
    ['http://[::1]/', 'private_address'],
    ['http://[::ffff:127.0.0.1]/', 'private_address'],
    ['http://0.0.0.0/', 'private_address'],
    ['http://0/', 'private_address'],
    ['http://[::]/', 'private_address'],
    ['http://2130706433/', 'private_address'],
    ['http://0x7f000001/', 'private_address'],
    ['http://017700000001/', 'private_address'],
    ['http://127.1/', 'private_address'],
    ['http://169.254.169.254/latest/meta-data/', 'private_address'],
    ['http://10.0.0.1/', 'private_address'],
    ['http://172.16.5.4/', 'private_address'],
    ['http://192.168.0.1/', 'private_address'],
    ['http://100.64.1.1/', 'private_address'],
    ['http://[fe80::1]/', 'private_address'],
    ['http://[fc00::1]/', 'private_address'],
    ['http://localhost/', 'localhost'],
    ['http://api.localhost/', 'localhost'],
    ['http://localhost./', 'trailing_dot'],
    ['http://example.com./', 'trailing_dot'],
    ['file:///etc/passwd', 'scheme'],
    ['gopher://127.0.0.1:70/_x', 'scheme'],
    ['ftp://example.com/', 'scheme'],
    ['data:text/plain,hi', 'scheme'],
    ['http://user:pw@example.com/', 'credentials'],
    ['not a url', 'invalid_url'],
  ])('refuses %s before connecting (%s)', (url, reason) => {
    expect(refusal(() => policy.checkUrl(url)).reason).toBe(reason);
  });

  it('says which address class was refused, so the model knows not to retry', () => {
    expect(refusal(() => policy.checkUrl('http://169.254.169.254/')).message).toContain('169.254.169.254 is a link-local address');
  });

  it.each(['http://93.184.216.34/', 'https://[2606:4700::1111]/', 'https://example.com/path?q=1'])('lets public %s through', (url) => {
    expect(policy.checkUrl(url).href).toBe(new URL(url).href);
  });

  it('lets allowlisted addresses through in every notation, and nothing else', () => {
    const local = createHostPolicy({ allowHosts: ['127.0.0.1', '10.1.0.0/16', 'intranet.test', '*.corp.test'] });
    for (const url of ['http://127.0.0.1/', 'http://2130706433/', 'http://[::ffff:127.0.0.1]/', 'http://10.1.2.3/', 'http://intranet.test/', 'http://a.corp.test/']) {
      expect(() => local.checkUrl(url)).not.toThrow();
    }
    for (const url of ['http://127.0.0.2/', 'http://10.2.0.1/', 'http://localhost/', 'file:///etc/passwd']) {
      expect(() => local.checkUrl(url)).toThrow(expect.objectContaining({ code: 'url_refused' }));
    }
    expect(local.allows('intranet.test', '192.168.9.9')).toBe(true);
    expect(local.allows('other.test', '192.168.9.9')).toBe(false);
    expect(local.allows('other.test', '10.1.9.9')).toBe(true);
  });

  it('allowPrivate lets internal addresses through but still refuses other schemes', () => {
    const open = createHostPolicy({ allowPrivate: true });
    expect(() => open.checkUrl('http://10.0.0.1/')).not.toThrow();
    expect(refusal(() => open.checkUrl('file:///etc/passwd')).reason).toBe('scheme');
  });

  it('rejects allowlist entries that are not hosts, addresses or blocks', () => {
    expect(() => createHostPolicy({ allowHosts: ['http://x/'] })).toThrow(ConfigurationError);
    expect(() => createHostPolicy({ allowHosts: ['10.0.0.0/40'] })).toThrow(ConfigurationError);
  });

  it('refuses a host when any one of its resolved addresses is internal', () => {
    expect(refusal(() => policy.checkResolved('http://mixed.test/', 'mixed.test', ['93.184.216.34', '10.0.0.1'])).reason).toBe('private_address');
    expect(refusal(() => policy.checkResolved('http://none.test/', 'none.test', [])).reason).toBe('unresolvable');
    expect(() => policy.checkResolved('http://pub.test/', 'pub.test', ['93.184.216.34', '2606:4700::1111'])).not.toThrow();
  });
});

describe('guarded lookup', () => {
  const policy = createHostPolicy();

  it('hands back exactly the public addresses it resolved and checked', async () => {
    const addresses = [
      { address: '93.184.216.34', family: 4 },
      { address: '2606:4700::1111', family: 6 },
    ];
    const lookup = guardedLookup(policy, 'http://public.test/', async () => addresses);
    expect(await lookupOnce(lookup, 'public.test', { all: true })).toEqual({ error: null, address: addresses, family: undefined });
    expect(await lookupOnce(lookup, 'public.test', { family: 6 })).toEqual({ error: null, address: '2606:4700::1111', family: 6 });
  });

  it('refuses a name that resolves to a private address, with the typed error', async () => {
    const lookup = guardedLookup(policy, 'http://intranet.test/', async () => [{ address: '10.0.0.5', family: 4 }]);
    const { error } = await lookupOnce(lookup, 'intranet.test', { all: true });
    expect(error).toMatchObject({ code: 'url_refused' });
    expect((error as WebFetchError).reason).toBe('private_address');
    expect(error?.message).toContain('"intranet.test" resolves to 10.0.0.5');
  });

  it('passes resolver failures on as errors', async () => {
    const lookup = guardedLookup(policy, 'http://gone.test/', () => Promise.reject(Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' })));
    expect((await lookupOnce(lookup, 'gone.test')).error?.message).toContain('ENOTFOUND');
  });
});
