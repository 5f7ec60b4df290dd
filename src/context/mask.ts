/** A masked result keeps its place and call id, so the call still has its answer, and says what is missing so the model can call again. */
import type { ToolMessage } from '../core/messages.ts';

export const MASKED_RESULT_PREFIX = '[masked tool result';

export function maskedResultText(toolName: string | undefined, originalChars: number): string {
  const what = toolName === undefined ? `${originalChars} chars` : `${JSON.stringify(toolName)} returned ${originalChars} chars`;
  return `${MASKED_RESULT_PREFIX}: ${what}; removed to fit the context budget — call it again if you need it]`;
}

/** Returns the same stand-in for the same original, so the per-object token cache stays warm across steps. */
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
