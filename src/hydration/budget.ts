/** Shared max-min fairly, so one huge page cannot starve the others. */
import { DEFAULTS } from '../core/defaults.ts';
import { sliceChars } from '../tools/text.ts';

export function estimateTokens(text: string, charsPerToken: number = DEFAULTS.hydration.charsPerToken): number {
  return Math.ceil(text.length / charsPerToken);
}

/** Items within their fair share get their size; the rest split what remains equally, never past `budget`. */
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

export function trimMarker(shownChars: number, originalChars: number, charsPerToken: number = DEFAULTS.hydration.charsPerToken): string {
  return `\n[truncated: showing ~${Math.ceil(shownChars / charsPerToken)} of ~${Math.ceil(originalChars / charsPerToken)} tokens]`;
}

/** `originalChars` is the size before any earlier cut; a share too small for the marker still gets it, so the reader knows something is missing. */
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
