/**
 * Over real sockets: every refused form is refused before a connection (the
 * local server sees no request), on every redirect hop, and at connect time for names; allowed
 * requests work, bounded in bytes and time. Traffic never leaves 127.0.0.1: `guardLoopbackOnly`
 * throws on any other destination, and each test asserts it never had to.
 */
import net from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../../src/core/errors.ts';
import { WebFetchError } from '../../../src/tools/builtin/errors.ts';
import { webFetch, type WebFetchOptions } from '../../../src/tools/builtin/webFetch.ts';
import { guardLoopbackOnly, startLocalServer, toolContext, type LocalServer } from './support.ts';

let server: LocalServer;
let guard: ReturnType<typeof guardLoopbackOnly>;
const slowResponses = new Set<() => void>();
let streamFinished: boolean | undefined;

beforeAll(async () => {
  guard = guardLoopbackOnly();
  server = await startLocalServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://x');
    const to = url.searchParams.get('to');
    switch (url.pathname) {
      case '/page':
        response.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
        response.end(`hello from ${request.headers.host} ✓`);
        return;
      case '/redirect':
        response.writeHead(302, { location: to ?? '/page' });
        response.end();
        return;
      case '/loop':
        response.writeHead(301, { location: '/loop' });
        response.end();
        return;
      case '/missing':
        response.writeHead(404, { 'content-type': 'text/plain' });
        response.end('nope');
        return;
      case '/png':
        response.writeHead(200, { 'content-type': 'image/png' });
        response.end(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]));
        return;
      case '/huge': {
        // 5 MB in 64 KiB chunks, honouring backpressure; records whether it got to the end.
        response.writeHead(200, { 'content-type': 'text/plain' });
        const chunk = Buffer.alloc(64 * 1024, 'a');
        let sent = 0;
        streamFinished = undefined;
        const pump = () => {
          while (sent < 80) {
            sent += 1;
            if (!response.write(chunk)) return void response.once('drain', pump);
          }
          response.end(() => (streamFinished = true));
        };
        response.once('close', () => (streamFinished ??= false));
        pump();
        return;
      }
      case '/hang':
        slowResponses.add(() => response.destroy());
        return;
      case '/trickle': {
        response.writeHead(200, { 'content-type': 'text/plain' });
        const timer = setInterval(() => response.write('.'), 20);
        response.once('close', () => clearInterval(timer));
        slowResponses.add(() => clearInterval(timer));
        return;
      }
      default:
        response.writeHead(500);
        response.end();
    }
  });
});

afterAll(async () => {
  for (const stop of slowResponses) stop();
  await server.close();
  guard.restore();
});

afterEach(() => {
  expect(guard.violations).toEqual([]);
});

async function fetchWith(options: WebFetchOptions, url: string, signal?: AbortSignal): Promise<string> {
  return webFetch(options).execute({ url }, toolContext(signal));
}

async function refused(options: WebFetchOptions, url: string): Promise<WebFetchError> {
  const error: unknown = await fetchWith(options, url).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof WebFetchError && error.code === 'url_refused')) throw new Error(`expected a url_refused WebFetchError, got ${String(error)}`);
  return error;
}

describe('the loopback-only test guard', () => {
  it('blocks a connection to any other address before it is made', () => {
    const socket = new net.Socket();
    expect(() => socket.connect({ host: '10.255.255.1', port: 80 })).toThrow(/test guard/);
    guard.violations.splice(0);
  });
});

describe('web_fetch SSRF battery', () => {
  const port = () => server.port;

  it.each([
    ['127.0.0.1', () => `http://127.0.0.1:${port()}/page`],
    ['[::1]', () => `http://[::1]:${port()}/page`],
    ['::ffff:127.0.0.1', () => `http://[::ffff:127.0.0.1]:${port()}/page`],
    ['0.0.0.0', () => `http://0.0.0.0:${port()}/page`],
    ['[::]', () => `http://[::]:${port()}/page`],
    ['2130706433', () => `http://2130706433:${port()}/page`],
    ['0x7f000001', () => `http://0x7f000001:${port()}/page`],
    ['017700000001', () => `http://017700000001:${port()}/page`],
    ['127.1', () => `http://127.1:${port()}/page`],
    ['169.254.169.254', () => 'http://169.254.169.254/latest/meta-data/iam/security-credentials/'],
    ['10.x', () => 'http://10.0.0.1/'],
    ['172.16.x', () => 'http://172.16.0.1/'],
    ['192.168.x', () => 'http://192.168.1.1/'],
    ['100.64.x (CGNAT)', () => 'http://100.64.0.1/'],
    ['fe80:: (link-local)', () => 'http://[fe80::1]/'],
    ['fc00:: (unique-local)', () => 'http://[fd00::1]/'],
    ['localhost', () => `http://localhost:${port()}/page`],
    ['localhost.', () => `http://localhost.:${port()}/page`],
    ['file://', () => 'file:///etc/passwd'],
    ['gopher://', () => `gopher://127.0.0.1:${port()}/_GET%20/page`],
    ['data:', () => 'data:text/plain,hello'],
    ['ftp://', () => 'ftp://127.0.0.1/'],
  ])('refuses %s and never connects', async (_label, url) => {
    const before = server.hits.length;
    const error = await refused({}, url());
    expect(error.code).toBe('url_refused');
    expect(server.hits.length).toBe(before);
  });

  it('refuses a name that resolves to a private address, at connect time', async () => {
    const lookups: string[] = [];
    const error = await refused(
      {
        lookup: async (name) => {
          lookups.push(name);
          return [{ address: '10.0.0.5', family: 4 }];
        },
      },
      'http://intranet.test/',
    );
    expect(error.reason).toBe('private_address');
    expect(error.message).toContain('"intranet.test" resolves to 10.0.0.5');
    expect(lookups).toEqual(['intranet.test']);
  });

  it('refuses a name when any of its addresses is private, even if another is public', async () => {
    const lookup = async () => [
      { address: '93.184.216.34', family: 4 },
      { address: '169.254.169.254', family: 4 },
    ];
    expect((await refused({ lookup }, 'http://mixed.test/')).reason).toBe('private_address');
  });

  it('connects to the address it checked: a made-up name mapped to 127.0.0.1 reaches the local server', async () => {
    const text = await fetchWith({ allowHosts: ['127.0.0.1'], lookup: async () => [{ address: '127.0.0.1', family: 4 }] }, `http://made-up.test:${port()}/page`);
    expect(text).toContain(`hello from made-up.test:${port()}`);
  });

  it('re-resolves and re-checks every hop: a rebinding name is refused at the second hop', async () => {
    let calls = 0;
    const lookup = async () => [{ address: calls++ === 0 ? '127.0.0.1' : '10.0.0.1', family: 4 }];
    const before = server.hits.length;
    const target = `http://rebind.test:${port()}/page`;
    const error = await refused({ allowHosts: ['127.0.0.1'], lookup }, `http://rebind.test:${port()}/redirect?to=${encodeURIComponent(target)}`);
    expect(error.hop).toBe(1);
    expect(error.message).toContain('resolves to 10.0.0.1');
    expect(calls).toBe(2);
    expect(server.hits.length).toBe(before + 1);
  });

  it.each([
    ['a private address', 'http://10.0.0.1/admin', 'private_address'],
    ['the metadata service', 'http://169.254.169.254/latest/meta-data/', 'private_address'],
    ['IPv6 loopback', 'http://[::1]/', 'private_address'],
    ['localhost', 'http://localhost/', 'localhost'],
    ['a file', 'file:///etc/passwd', 'scheme'],
    ['gopher', 'gopher://127.0.0.1:6379/_FLUSHALL', 'scheme'],
  ])('refuses a redirect from an allowlisted server to %s at the second hop', async (_label, to, reason) => {
    const before = server.hits.length;
    const error = await refused({ allowHosts: ['trusted.test'], lookup: async () => [{ address: '127.0.0.1', family: 4 }] }, `http://trusted.test:${port()}/redirect?to=${encodeURIComponent(to)}`);
    expect(error.reason).toBe(reason);
    expect(error.hop).toBe(1);
    expect(error.message).toContain('(redirect 1)');
    expect(server.hits.length).toBe(before + 1);
  });

  it('refuses a redirect to 127.0.0.1 itself when only the name that led there is allowlisted', async () => {
    const to = `http://0x7f000001:${port()}/page`;
    const error = await refused({ allowHosts: ['trusted.test'], lookup: async () => [{ address: '127.0.0.1', family: 4 }] }, `http://trusted.test:${port()}/redirect?to=${encodeURIComponent(to)}`);
    expect([error.reason, error.hop]).toEqual(['private_address', 1]);
  });

  it('stops after maxRedirects', async () => {
    const before = server.hits.length;
    const error = await refused({ allowHosts: ['127.0.0.1'], maxRedirects: 3 }, server.url('/loop'));
    expect(error.reason).toBe('too_many_redirects');
    expect(server.hits.length).toBe(before + 4);
  });
});

describe('web_fetch on allowed addresses', () => {
  const local: WebFetchOptions = { allowHosts: ['127.0.0.1'] };

  it('returns the status line and the body', async () => {
    const text = await fetchWith(local, server.url('/page'));
    expect(text).toBe(`200 OK from ${server.url('/page')} (text/plain; charset=utf-8)\n\nhello from 127.0.0.1:${server.port} ✓`);
  });

  it('reaches the same allowlisted address through its numeric spellings', async () => {
    expect(await fetchWith(local, `http://2130706433:${server.port}/page`)).toContain('hello from');
  });

  it('follows allowed redirects and names the final URL', async () => {
    const text = await fetchWith(local, server.url('/redirect?to=/page'));
    expect(text.startsWith(`200 OK from ${server.url('/page')}`)).toBe(true);
    expect(text).toContain('redirected 1×');
  });

  it('cuts a 5 MB body at maxBytes with a marker and stops downloading', async () => {
    const text = await fetchWith({ ...local, maxBytes: 10_000 }, server.url('/huge'));
    const body = text.split('\n\n')[1]!;
    expect(body).toMatch(/^a{10000}\n\[truncated: showing 10000 of at least \d+ bytes\]$/);
    await expect.poll(() => streamFinished, { timeout: 2_000 }).toBe(false);
  });

  it('describes binary bodies instead of dumping them', async () => {
    expect(await fetchWith(local, server.url('/png'))).toContain('[binary: 8 bytes, image/png; hex: 89 50 4e 47 00 01 02 03]');
  });

  it('reports 4xx answers as a typed error with the status', async () => {
    const error: unknown = await fetchWith(local, server.url('/missing')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WebFetchError);
    expect([(error as WebFetchError).reason, (error as WebFetchError).status]).toEqual(['http_status', 404]);
  });

  it.each([
    ['never answers', '/hang'],
    ['answers but trickles the body', '/trickle'],
  ])('gives up on a server that %s at timeoutMs', async (_label, path) => {
    const started = Date.now();
    const error: unknown = await fetchWith({ ...local, timeoutMs: 150 }, server.url(path)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WebFetchError);
    expect((error as WebFetchError).reason).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(1_500);
  });

  it('stops when the caller aborts, with the caller’s reason', async () => {
    const controller = new AbortController();
    const pending = fetchWith(local, server.url('/hang'), controller.signal);
    setTimeout(() => controller.abort(new Error('run cancelled')), 30);
    await expect(pending).rejects.toThrow('run cancelled');
  });

  it('reports a refused connection as a network failure', async () => {
    const closed = await startLocalServer(() => undefined);
    const url = closed.url('/page');
    await closed.close();
    const error: unknown = await fetchWith(local, url).catch((e: unknown) => e);
    expect((error as WebFetchError).reason).toBe('network');
  });

  it('declares the tool for the model with a strict { url } schema', () => {
    const tool = webFetch();
    expect(tool.name).toBe('web_fetch');
    expect(tool.permissions).toEqual(['net.fetch']);
    expect(tool.input.safeParse({ url: 'https://x.test/', extra: 1 }).success).toBe(false);
  });

  it('rejects nonsensical limits at creation', () => {
    expect(() => webFetch({ maxBytes: 0 })).toThrow(ConfigurationError);
    expect(() => webFetch({ maxRedirects: 1.5 })).toThrow(ConfigurationError);
  });
});
