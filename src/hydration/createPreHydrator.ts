/** Pre-hydration never fails the run: what cannot be resolved is counted as failed and named in the message. */
import { randomBytes } from 'node:crypto';
import type { Hydrator } from '../core/hooks.ts';
import type { Message } from '../core/messages.ts';
import { DEFAULTS } from '../core/defaults.ts';
import { ConfigurationError } from '../core/errors.ts';
import { formatToolError } from '../tools/formatError.ts';
import { serializeToolResult } from '../tools/result.ts';
import { printable } from '../tools/text.ts';
import type { Tool } from '../tools/types.ts';
import { estimateTokens, fairShares, trimToShare } from './budget.ts';
import { formatPreHydratedContext, type ContextBlock, type UnavailableReference } from './format.ts';
import { extractReferences, type Reference, type ReferencePattern } from './references.ts';
import { resolveAll } from './resolveAll.ts';
import { resolverTable, type ReferenceResolvers } from './resolvers.ts';

export interface PreHydratorOptions {
  /** Resolvers by kind (`url`, `file`, `issue`, `pr`, custom kinds). Kinds without one are not extracted. */
  readonly resolvers: ReferenceResolvers;
  /** Tools that resolvers given by name (`{ url: 'web_fetch' }`) are looked up in — usually the agent's tools. */
  readonly tools?: readonly Tool[];
  readonly patterns?: readonly ReferencePattern[];
  readonly maxReferences?: number;
  readonly timeoutMs?: number;
  /** Budget of the injected message, in estimated tokens (chars / 4). Default 4 000. */
  readonly maxContextTokens?: number;
}

interface Resolved {
  readonly reference: Reference;
  readonly content: string;
  /** Size before any cut, in characters (bytes for non-string values a resolver returned). */
  readonly originalChars: number;
}

function positiveInteger(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!(Number.isSafeInteger(value) && value > 0)) {
    throw new ConfigurationError(`Pre-hydration ${name} must be a positive whole number (got ${String(value)}); the default is ${fallback}.`);
  }
  return value;
}

function toResolved(reference: Reference, value: unknown, maxChars: number): Resolved {
  if (typeof value === 'string') return { reference, content: value, originalChars: value.length };
  // Bytes bound chars from above, so this keeps at least as much as the budget can show.
  const serialized = serializeToolResult(value, maxChars * 4);
  return { reference, content: serialized.content, originalChars: serialized.truncated ? serialized.originalBytes : serialized.content.length };
}

/** When even the headers do not fit, the failure list goes first, then the last references. */
function buildMessage(resolved: readonly Resolved[], unavailable: readonly UnavailableReference[], budgetTokens: number) {
  const boundary = randomBytes(6).toString('hex');
  const budgetChars = budgetTokens * DEFAULTS.hydration.charsPerToken;
  let kept = [...resolved];
  let listed = [...unavailable];
  for (;;) {
    if (kept.length === 0) return { text: undefined, included: 0 };
    const empty: ContextBlock[] = kept.map(({ reference }) => ({ reference, content: '' }));
    const overhead = formatPreHydratedContext(empty, listed, boundary).length;
    const shares = fairShares(kept.map((item) => item.content.length), budgetChars - overhead);
    const blocks = kept.map((item, index) => ({
      reference: item.reference,
      content: printable(trimToShare(item.content, shares[index]!, item.originalChars).text),
    }));
    const text = formatPreHydratedContext(blocks, listed, boundary);
    if (estimateTokens(text) <= budgetTokens) return { text, included: kept.length };
    // Over budget only when headers crowd out content: drop the failure list first, then the last reference.
    if (listed.length > 0) listed = [];
    else kept = kept.slice(0, -1);
  }
}

/**
 * Emits one `prehydration.completed` per run; `failed` counts errors, timeouts and references the budget had no room for.
 * @example
 * ```ts
 * createAgent({ model, tools, context: { experimental_hydrator: createPreHydrator({ resolvers: { url: webFetch() } }) } });
 * ```
 */
export function createPreHydrator(options: PreHydratorOptions): Hydrator {
  if (typeof options !== 'object' || options === null) {
    throw new ConfigurationError('createPreHydrator needs options: { resolvers: { url: webFetch(), file: fileRead({ root: "." }) } }.');
  }
  const resolvers = resolverTable(options.resolvers, options.tools);
  const patterns = options.patterns ?? [];
  extractReferences('', { patterns }); // validates the patterns now, not on the first run
  const defaults = DEFAULTS.hydration;
  const maxReferences = positiveInteger('maxReferences', options.maxReferences, defaults.maxReferences);
  const timeoutMs = positiveInteger('timeoutMs', options.timeoutMs, defaults.timeoutMs);
  const maxContextTokens = positiveInteger('maxContextTokens', options.maxContextTokens, defaults.maxContextTokens);

  return async ({ task }, context) => {
    let found: Reference[] = [];
    let chosen: Reference[] = [];
    try {
      found = extractReferences(task, { patterns }).filter((reference) => resolvers.has(reference.kind));
      chosen = found.slice(0, maxReferences);
      const outcomes = await resolveAll(chosen, { resolvers, timeoutMs, signal: context.signal, runId: context.runId, agentId: context.agentId });
      const resolved: Resolved[] = [];
      const unavailable: UnavailableReference[] = [];
      for (const outcome of outcomes) {
        if (outcome.ok) resolved.push(toResolved(outcome.reference, outcome.value, maxContextTokens * defaults.charsPerToken));
        else unavailable.push({ reference: outcome.reference, reason: outcome.timedOut ? `not resolved within ${timeoutMs} ms` : formatToolError(outcome.error, 200) });
      }
      const { text, included } = buildMessage(resolved, unavailable, maxContextTokens);
      // Fetched content is never system text: a user message, marked untrusted, so it taints the run.
      const inject: Message[] = text === undefined ? [] : [{ role: 'user', content: text, untrusted: 'pre-hydration' }];
      context.emit({
        type: 'prehydration.completed',
        found: found.length,
        resolved: included,
        failed: chosen.length - included,
        tokens: text === undefined ? 0 : estimateTokens(text),
      });
      return { inject };
    } catch (error) {
      // Unreachable by design (resolvers' failures are outcomes); still, hydration must never fail the run.
      console.warn(`[actorloop] pre-hydration skipped: ${formatToolError(error, 300)}`);
      context.emit({ type: 'prehydration.completed', found: found.length, resolved: 0, failed: chosen.length, tokens: 0 });
      return { inject: [] };
    }
  };
}
