/**
 * The connect-time half of the SSRF guard. node:http asks the socket's `lookup` for the
 * addresses to connect to; this one resolves the name itself, refuses the whole host if any
 * address is internal, and hands back exactly the addresses it checked. Resolution and
 * connection therefore see the same answer: a DNS server that answers "public" to a pre-check
 * and "127.0.0.1" to the connection (DNS rebinding) has no second question to answer.
 */
import { promises as dns, type LookupAddress, type LookupOptions } from 'node:dns';
import type { LookupFunction } from 'node:net';
import type { HostPolicy } from './hostPolicy.ts';

/**
 * Resolve a host name to every address it has. Inject one in tests (or to use your own DNS).
 *
 * @example
 * ```ts
 * const resolveHost: ResolveHost = async (name) => (name === 'intranet.test' ? [{ address: '10.0.0.5', family: 4 }] : []);
 * ```
 */
export type ResolveHost = (hostname: string) => Promise<readonly LookupAddress[]>;

/**
 * The system resolver (getaddrinfo, so /etc/hosts counts), every address, in the OS's order.
 *
 * @example
 * ```ts
 * await systemResolveHost('localhost'); // [{ address: '::1', family: 6 }, { address: '127.0.0.1', family: 4 }]
 * ```
 */
export const systemResolveHost: ResolveHost = (hostname) => dns.lookup(hostname, { all: true, verbatim: true });

function wantedFamily(options: LookupOptions): 0 | 4 | 6 {
  const family: unknown = options.family;
  if (family === 4 || family === 'IPv4') return 4;
  if (family === 6 || family === 'IPv6') return 6;
  return 0;
}

/**
 * A `lookup` for node:http/https request options that enforces `policy` on what `hostname`
 * resolves to. Errors (refusals included) reach the request's `error` event unchanged.
 *
 * @example
 * ```ts
 * http.request(url, { lookup: guardedLookup(policy, url.href, systemResolveHost), agent: false });
 * ```
 */
export function guardedLookup(policy: HostPolicy, url: string, resolveHost: ResolveHost): LookupFunction {
  return (hostname, options, callback) => {
    const done = (error: Error | null, addresses: readonly LookupAddress[] = []): void => {
      if (error !== null) {
        callback(error, '', 0);
        return;
      }
      const family = wantedFamily(options);
      const usable = addresses.filter((entry) => family === 0 || entry.family === family);
      if (usable.length === 0) {
        const missing = Object.assign(new Error(`"${hostname}" has no IPv${family} address`), { code: 'ENOTFOUND' });
        callback(missing, '', 0);
      } else if (options.all === true) callback(null, usable.map((entry) => ({ ...entry })));
      else callback(null, usable[0]!.address, usable[0]!.family);
    };
    resolveHost(hostname).then(
      (addresses) => {
        try {
          policy.checkResolved(url, hostname, addresses.map((entry) => entry.address));
        } catch (error) {
          done(error instanceof Error ? error : new Error(String(error)));
          return;
        }
        done(null, addresses);
      },
      (error: unknown) => done(error instanceof Error ? error : new Error(String(error))),
    );
  };
}
