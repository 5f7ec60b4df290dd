import { TextDecoder } from 'node:util';
import { z } from 'zod';
import { DEFAULTS } from '../../core/defaults.ts';
import { ConfigurationError } from '../../core/errors.ts';
import { defineTool } from '../defineTool.ts';
import { truncationMarker } from '../result.ts';
import { printable } from '../text.ts';
import type { Tool } from '../types.ts';
import { completeUtf8, textOrDescription } from './decode.ts';
import { WebFetchError } from './errors.ts';
import { fetchUrl, type FetchUrlResult } from './fetchUrl.ts';
import { systemResolveHost, type ResolveHost } from './guardedLookup.ts';
import { createHostPolicy, type HostPolicyOptions } from './hostPolicy.ts';

export interface WebFetchOptions extends HostPolicyOptions {
  /** Longer bodies are cut with a marker. Default 1 MiB. */
  readonly maxBytes?: number;
  /** Covers redirects and body, in ms. Default 10 s. */
  readonly timeoutMs?: number;
  /** Each redirect is re-checked. Default 5. */
  readonly maxRedirects?: number;
  /** Default: the system resolver. */
  readonly lookup?: ResolveHost;
}

const Input = z.object({
  url: z.string().min(1).max(4096).describe('Absolute http:// or https:// URL of a public page'),
});

const TEXT_TYPES = /^(?:text\/|application\/(?:[\w.+-]*\+)?(?:json|xml|javascript|x-yaml|yaml|x-www-form-urlencoded)\b)/i;

function positive(name: string, value: number | undefined, fallback: number, integer = false): number {
  if (value === undefined) return fallback;
  if (!(Number.isFinite(value) && value >= (integer ? 0 : 1)) || (integer && !Number.isInteger(value))) {
    throw new ConfigurationError(`webFetch: ${name} must be a ${integer ? 'whole number >= 0' : 'positive number'} (got ${String(value)}); the default is ${fallback}.`);
  }
  return value;
}

function decoderFor(contentType: string | undefined): TextDecoder {
  const charset = /charset="?([\w-]+)/i.exec(contentType ?? '')?.[1];
  try {
    return new TextDecoder(charset ?? 'utf-8');
  } catch {
    return new TextDecoder('utf-8');
  }
}

function bodyText(result: FetchUrlResult): string {
  if (result.contentType !== undefined && !TEXT_TYPES.test(result.contentType)) return textOrDescription(result.body, result.truncated);
  // Declared text: decode leniently (invalid bytes become U+FFFD) in the declared charset.
  const decoder = decoderFor(result.contentType);
  const bytes = result.truncated && decoder.encoding === 'utf-8' ? completeUtf8(result.body) : result.body;
  return printable(decoder.decode(bytes));
}

export function formatFetchResult(result: FetchUrlResult): string {
  const type = result.contentType === undefined ? '' : ` (${result.contentType})`;
  const via = result.redirects.length === 0 ? '' : `\nredirected ${result.redirects.length}×; final URL above`;
  const marker = result.truncated ? truncationMarker(result.body.length, result.totalBytes, result.totalExact) : '';
  return `${result.status} ${result.statusText} from ${result.url}${type}${via}\n\n${bodyText(result)}${marker}`;
}

/**
 * The `web_fetch` tool. HTTP errors and refused URLs throw typed errors that reach the model as observations.
 *
 * @example
 * ```ts
 * const agent = createAgent({ model, tools: [webFetch({ allowHosts: ['docs.internal.example'] })] });
 * ```
 */
export function webFetch(options: WebFetchOptions = {}): Tool<z.infer<typeof Input>, string> {
  const defaults = DEFAULTS.hydration.webFetch;
  const maxBytes = positive('maxBytes', options.maxBytes, defaults.maxBytes);
  const timeoutMs = positive('timeoutMs', options.timeoutMs, defaults.timeoutMs);
  const maxRedirects = positive('maxRedirects', options.maxRedirects, defaults.maxRedirects, true);
  const policy = createHostPolicy(options);
  const resolveHost = options.lookup ?? systemResolveHost;
  return defineTool({
    name: 'web_fetch',
    description: `Fetch a public web page or file by http(s) URL and return its text (at most ${maxBytes} bytes). Internal, private and loopback addresses are refused.`,
    input: Input,
    permissions: ['net.fetch'],
    // A page is written by whoever runs the site: what it says is data, never the user's instructions.
    untrusted: true,
    // Our own deadline fires first, with a message that names the URL.
    timeoutMs: timeoutMs + 1_000,
    execute: async ({ url }, { signal }) => {
      const result = await fetchUrl(url, { policy, resolveHost, maxBytes, timeoutMs, maxRedirects, signal });
      if (result.status >= 400) {
        throw new WebFetchError('web_fetch_failed', { url: result.url, reason: 'http_status', status: result.status, detail: `the server answered ${result.status} ${result.statusText}` });
      }
      return formatFetchResult(result);
    },
  });
}
