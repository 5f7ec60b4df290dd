/**
 * Observation masking: the stand-in for a tool result the budget removed. It keeps the
 * message's place and call id (so the call still has its answer) and tells the model what is
 * missing — which tool, how much — so it can call again if it needs the detail.
 */
import type { ToolMessage } from '../core/messages.ts';

/** Prefix of every masked tool result, for readers (and tests) that look for them. */
export const MASKED_RESULT_PREFIX = '[masked tool result';

/**
 * The marker text for a removed result of `originalChars` characters.
 *
 * @example
 * ```ts
 * maskedResultText('search', 5234);
 * // '[masked tool result: "search" returned 5234 chars; removed to fit the context budget — call it again if you need it]'
 * ```
 */
export function maskedResultText(toolName: string | undefined, originalChars: number): string {
  const what = toolName === undefined ? `${originalChars} chars` : `${JSON.stringify(toolName)} returned ${originalChars} chars`;
  return `${MASKED_RESULT_PREFIX}: ${what}; removed to fit the context budget — call it again if you need it]`;
}

/**
 * A masker that returns the same stand-in object for the same original every time: the view
 * is rebuilt each step, and reusing the objects keeps it allocation-free (and the token
 * counter's per-object cache warm).
 *
 * @example
 * ```ts
 * const maskedOf = createMasker();
 * const a = maskedOf(result, 'search');
 * maskedOf(result, 'search') === a; // true
 * a.toolCallId === result.toolCallId; // true — the call keeps its answer
 * ```
 */
export function createMasker(): (message: ToolMessage, toolName: string | undefined) => ToolMessage {
  const cache = new WeakMap<ToolMessage, ToolMessage>();
  return (message, toolName) => {
    let masked = cache.get(message);
    if (masked === undefined) {
      // A masked result's images go with its text: they are what a mask saves most on.
      const { parts: _parts, ...rest } = message;
      masked = { ...rest, content: maskedResultText(toolName ?? message.name, message.content.length) };
      cache.set(message, masked);
    }
    return masked;
  };
}
