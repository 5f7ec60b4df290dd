/**
 * The connect-time half of the SSRF guard: resolve the name ourselves and hand node:http exactly
 * the addresses checked, so a rebinding DNS server cannot answer "public" to a check and "127.0.0.1" to the connection.
 */
import { promises as dns, type LookupAddress, type LookupOptions } from 'node:dns';
import type { LookupFunction } from 'node:net';
import type { HostPolicy } from './hostPolicy.ts';

export type ResolveHost = (hostname: string) => Promise<readonly LookupAddress[]>;

/** getaddrinfo, so /etc/hosts counts. */
export const systemResolveHost: ResolveHost = (hostname) => dns.lookup(hostname, { all: true, verbatim: true });

function wantedFamily(options: LookupOptions): 0 | 4 | 6 {
  const family: unknown = options.family;
  if (family === 4 || family === 'IPv4') return 4;
  if (family === 6 || family === 'IPv6') return 6;
  return 0;
}

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
