import { ConfigurationError } from '../../core/errors.ts';
import { WebFetchError, type UrlRefusalReason } from './errors.ts';
import { cidrContains, classifyAddress, parseAddress, parseCidr, type Cidr } from './ipAddress.ts';

export interface HostPolicyOptions {
  /**
   * Exceptions to the private-address refusal: host names (`*.corp.example` for subdomains), IPs and
   * CIDR blocks. A listed name may resolve to anything; a listed address may be reached under any name.
   */
  readonly allowHosts?: readonly string[];
  /** Reach every address (loopback, private, link-local …). Default false; prefer `allowHosts`. */
  readonly allowPrivate?: boolean;
}

export interface HostPolicy {
  checkUrl(url: string): URL;
  checkResolved(url: string, hostname: string, addresses: readonly string[]): void;
  allows(hostname: string, address: string): boolean;
}

interface Allowlist {
  readonly names: ReadonlySet<string>;
  readonly suffixes: readonly string[];
  readonly blocks: readonly Cidr[];
}

const HOST_NAME = /^[a-z0-9_-]+(?:\.[a-z0-9_-]+)*$/;

function parseAllowlist(entries: readonly string[]): Allowlist {
  const names = new Set<string>();
  const suffixes: string[] = [];
  const blocks: Cidr[] = [];
  for (const raw of entries) {
    const entry = typeof raw === 'string' ? raw.trim().toLowerCase() : '';
    const bare = entry.startsWith('[') && entry.endsWith(']') ? entry.slice(1, -1) : entry;
    const block = bare.includes('/') ? parseCidr(bare) : parseAddress(bare) === undefined ? undefined : parseCidr(addressText(bare));
    if (block !== undefined) blocks.push(block);
    else if (entry.startsWith('*.') && HOST_NAME.test(entry.slice(2))) suffixes.push(entry.slice(1));
    else if (HOST_NAME.test(entry.replace(/\.$/, ''))) names.add(entry.replace(/\.$/, ''));
    else {
      throw new ConfigurationError(
        `allowHosts entry ${JSON.stringify(raw)} is not a host name, IP address or CIDR block; use e.g. "intranet.example", "*.corp.example", "127.0.0.1" or "10.0.0.0/8".`,
      );
    }
  }
  return { names, suffixes, blocks };
}

/** Canonical dotted form, so parseCidr accepts a loose spelling like `127.1`. */
function addressText(text: string): string {
  const parsed = parseAddress(text);
  if (parsed === undefined || parsed.version === 6) return text;
  const v = parsed.value;
  return [24n, 16n, 8n, 0n].map((shift) => String((v >> shift) & 255n)).join('.');
}

function unbracket(hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
}

export function createHostPolicy(options: HostPolicyOptions = {}): HostPolicy {
  const allowlist = parseAllowlist(options.allowHosts ?? []);
  const allowPrivate = options.allowPrivate === true;

  const nameAllowed = (hostname: string): boolean =>
    allowlist.names.has(hostname) || allowlist.suffixes.some((suffix) => hostname.endsWith(suffix));

  const allows = (hostname: string, address: string): boolean => {
    if (allowPrivate || nameAllowed(hostname.toLowerCase())) return true;
    const parsed = parseAddress(address);
    if (parsed === undefined) return false;
    return allowlist.blocks.some((block) => cidrContains(block, parsed)) || classifyAddress(parsed) === 'public';
  };

  function checkUrl(raw: string): URL {
    const refuse = (reason: UrlRefusalReason, detail: string): never => {
      throw new WebFetchError('url_refused', { url: raw, reason, detail });
    };
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      return refuse('invalid_url', 'it is not an absolute URL; give one like "https://example.com/page"');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      refuse('scheme', `only http: and https: URLs can be fetched, not ${url.protocol}`);
    }
    if (url.username !== '' || url.password !== '') {
      refuse('credentials', 'URLs with user:password@ are not fetched; remove the credentials');
    }
    const hostname = url.hostname.toLowerCase();
    // A trailing dot makes the same host look like another string to allow- and denylists.
    if (hostname.endsWith('.')) refuse('trailing_dot', 'host names ending in "." are not fetched; drop the trailing dot');
    if (allowPrivate || nameAllowed(hostname)) return url;
    const host = unbracket(hostname);
    const literal = parseAddress(host);
    if (literal !== undefined) {
      if (!allows(hostname, host)) {
        refuse('private_address', `${host} is a ${classifyAddress(literal).replace('_', '-')} address, which is not reachable from this tool`);
      }
      return url;
    }
    if (host === 'localhost' || host.endsWith('.localhost')) {
      refuse('localhost', `"${host}" always means this machine, which is not reachable from this tool`);
    }
    return url;
  }

  function checkResolved(url: string, hostname: string, addresses: readonly string[]): void {
    if (addresses.length === 0) {
      throw new WebFetchError('url_refused', { url, reason: 'unresolvable', detail: `"${hostname}" did not resolve to any address` });
    }
    for (const address of addresses) {
      if (!allows(hostname, address)) {
        throw new WebFetchError('url_refused', {
          url,
          reason: 'private_address',
          detail: `"${hostname}" resolves to ${address}, a ${classifyAddress(address).replace('_', '-')} address, which is not reachable from this tool`,
        });
      }
    }
  }

  return { checkUrl, checkResolved, allows };
}
