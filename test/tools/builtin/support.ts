/**
 * Test support for the built-in tools: a local HTTP server on 127.0.0.1, and a guard that makes
 * any connection to another address throw before a packet leaves — so even a broken SSRF check
 * can never send test traffic off this machine.
 */
import dns, { type LookupAddress } from 'node:dns';
import http from 'node:http';
import net, { type LookupFunction } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface LocalServer {
  readonly port: number;
  /** `http://127.0.0.1:<port><path>` */
  url(path?: string): string;
  /** Paths requested so far. */
  readonly hits: string[];
  close(): Promise<void>;
}

/** Start an HTTP server on 127.0.0.1 (never another interface). */
export async function startLocalServer(handler: http.RequestListener): Promise<LocalServer> {
  const hits: string[] = [];
  const server = http.createServer((request, response) => {
    hits.push(request.url ?? '');
    handler(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    hits,
    url: (path = '/') => `http://127.0.0.1:${port}${path}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

type Connect = typeof net.Socket.prototype.connect;

/**
 * Patch `net.Socket.prototype.connect` so only 127.0.0.1 (and Unix sockets) can be reached.
 * Literal hosts are checked at once; host names get their lookup wrapped so every resolved
 * address is checked. Violations are recorded (and the connection refused) — assert `[]`.
 */
export function guardLoopbackOnly(): { readonly violations: string[]; restore(): void } {
  const violations: string[] = [];
  const original: Connect = net.Socket.prototype.connect;
  function guarded(this: net.Socket, ...args: unknown[]): net.Socket {
    const first = args[0];
    const options: unknown = Array.isArray(first) ? first[0] : first;
    if (typeof options === 'object' && options !== null && !('path' in options && typeof options.path === 'string')) {
      const target = options as { host?: string; lookup?: LookupFunction };
      const host = target.host ?? 'localhost';
      if (net.isIP(host) !== 0) {
        if (host !== '127.0.0.1') {
          violations.push(host);
          throw new Error(`test guard: connection to ${host} blocked`);
        }
      } else {
        const inner: LookupFunction = target.lookup ?? (dns.lookup as unknown as LookupFunction);
        target.lookup = (hostname, lookupOptions, callback) =>
          inner(hostname, lookupOptions, (error, address, family) => {
            const list = typeof address === 'string' ? [address] : (address as LookupAddress[]).map((entry) => entry.address);
            const bad = error === null ? list.filter((entry) => entry !== '127.0.0.1') : [];
            if (bad.length > 0) {
              violations.push(...bad.map((entry) => `${hostname}=${entry}`));
              callback(new Error(`test guard: ${hostname} → ${bad.join(', ')} blocked`), '', 0);
              return;
            }
            callback(error, address, family);
          });
      }
    } else if (typeof first === 'number') {
      violations.push(`port-only connect to ${String(args[1])}`);
      throw new Error('test guard: positional connect blocked');
    }
    return (original as (...rest: unknown[]) => net.Socket).apply(this, args);
  }
  net.Socket.prototype.connect = guarded as Connect;
  return {
    violations,
    restore: () => {
      net.Socket.prototype.connect = original;
    },
  };
}

/** A ToolContext for calling a tool's execute directly. */
export function toolContext(signal: AbortSignal = new AbortController().signal) {
  return { signal, toolCallId: 'call_test', idempotencyKey: 'run_test:call_test', runId: 'run_test', agentId: 'agent_test' };
}
