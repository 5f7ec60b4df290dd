/**
 * Images and files in what the context budget measures and masks: each counts for a fixed
 * allowance in the estimate (providers bill pixels or pages, not the bytes of the reference), and
 * a masked tool result loses its images along with its text.
 */
import { describe, expect, it } from 'vitest';
import { estimateMessageTokens } from '../../src/context/estimate.ts';
import { createMasker } from '../../src/context/mask.ts';
import { DEFAULTS } from '../../src/core/defaults.ts';
import type { ToolMessage, UserMessage } from '../../src/core/messages.ts';

describe('media parts in the context budget', () => {
  it('counts each image or file of a user message, and each image of a tool result, for DEFAULTS.context.mediaPartTokens', () => {
    const text: UserMessage = { role: 'user', content: 'Describe' };
    const withParts: UserMessage = {
      role: 'user',
      content: [
        { type: 'text', text: 'Describe' },
        { type: 'image', ref: 'sha256-ab', mediaType: 'image/png', bytes: 10 },
        { type: 'file', ref: 'sha256-cd', mediaType: 'application/pdf', bytes: 10 },
      ],
    };
    // The parts' text is 'Describe\n[image]\n[file]'; the two media parts add their allowance.
    const partsText = Math.ceil('Describe\n[image]\n[file]'.length / 4) - Math.ceil('Describe'.length / 4);
    expect(estimateMessageTokens(withParts) - estimateMessageTokens(text)).toBe(2 * DEFAULTS.context.mediaPartTokens + partsText);
    const tool: ToolMessage = { role: 'tool', toolCallId: 'c1', content: 'x', parts: [{ type: 'image', ref: 'sha256-ab', mediaType: 'image/png' }] };
    expect(estimateMessageTokens(tool) - estimateMessageTokens({ ...tool, parts: [] })).toBe(DEFAULTS.context.mediaPartTokens);
  });

  it('drops a masked tool result’s images', () => {
    const tool: ToolMessage = { role: 'tool', toolCallId: 'c1', name: 'shot', content: 'a screenshot', parts: [{ type: 'image', ref: 'sha256-ab', mediaType: 'image/png' }] };
    const masked = createMasker()(tool, 'shot');
    expect(masked.parts).toBeUndefined();
    expect(masked.toolCallId).toBe('c1');
  });
});
