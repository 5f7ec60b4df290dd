/**
 * Token budgeting for the pre-hydrated context. Tokens are estimated as characters / 4 — cheap,
 * provider-independent, and close enough for a budget whose job is to keep one message from
 * crowding out the task. The budget is shared fairly: small references are kept whole and what
 * they leave is split evenly among the large ones (max-min fairness), so one huge page cannot
 * starve the others.
 */
import { DEFAULTS } from '../core/defaults.ts';
import { sliceChars } from '../tools/text.ts';

/**
 * Estimated tokens of `text`: `ceil(length / charsPerToken)`.
 *
 * @example
 * ```ts
 * estimateTokens('12345678'); // 2
 * ```
 */
export function estimateTokens(text: string, charsPerToken: number = DEFAULTS.hydration.charsPerToken): number {
  return Math.ceil(text.length / charsPerToken);
}

/**
 * Split `budget` among items of the given sizes: an item that fits its fair share gets its
 * size, the rest get equal shares of what remains. The shares never sum past `budget`.
 *
 * @example
 * ```ts
 * fairShares([100, 5_000, 9_000], 1_000); // [100, 450, 450]
 * ```
 */
export function fairShares(sizes: readonly number[], budget: number): number[] {
  const shares = sizes.map(() => 0);
  const order = sizes.map((_, index) => index).sort((a, b) => sizes[a]! - sizes[b]!);
  let remaining = Math.max(0, Math.floor(budget));
  order.forEach((index, position) => {
    const fair = Math.floor(remaining / (order.length - position));
    const share = Math.min(sizes[index]!, fair);
    shares[index] = share;
    remaining -= share;
  });
  return shares;
}

/**
 * The marker that ends a trimmed reference, stating how much of it is shown.
 *
 * @example
 * ```ts
 * trimMarker(1_000, 52_311); // '\n[truncated: showing ~250 of ~13078 tokens]'
 * ```
 */
export function trimMarker(shownChars: number, originalChars: number, charsPerToken: number = DEFAULTS.hydration.charsPerToken): string {
  return `\n[truncated: showing ~${Math.ceil(shownChars / charsPerToken)} of ~${Math.ceil(originalChars / charsPerToken)} tokens]`;
}

/**
 * Cut `text` to at most `share` characters, marker included when it is cut. `originalChars`
 * is the size before any earlier cut (a resolver may have bounded its own output). A share too
 * small for the marker still gets the marker: the reader must know something is missing.
 *
 * @example
 * ```ts
 * trimToShare('x'.repeat(10_000), 400).text.endsWith('of ~2500 tokens]'); // true
 * ```
 */
export function trimToShare(
  text: string,
  share: number,
  originalChars: number = text.length,
  charsPerToken: number = DEFAULTS.hydration.charsPerToken,
): { readonly text: string; readonly truncated: boolean } {
  if (text.length <= share && originalChars <= text.length) return { text, truncated: false };
  // The marker with the largest shown count it could state is the longest it can get.
  const room = Math.max(0, share - trimMarker(share, originalChars, charsPerToken).length);
  const kept = sliceChars(text, room);
  return { text: kept + trimMarker(kept.length, originalChars, charsPerToken), truncated: true };
}
