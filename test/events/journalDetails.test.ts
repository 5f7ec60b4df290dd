/**
 * Journal entries carry each tool call's arguments and observation, capped, so a reader of the
 * journal alone (another process, a store) shows what the run's conversation holds.
 */
import { describe, expect, it, afterEach } from 'vitest';
import { z } from 'zod';
import { capJournalDetail, JOURNAL_DETAIL_CHARS, type LoopEventOf } from '../../src/core/loopEvent.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { defineTool } from '../../src/tools/defineTool.ts';
import { agentWithEntries, stopTrackedAgents } from '../support/agents.ts';

afterEach(stopTrackedAgents);

const LONG = 'x'.repeat(JOURNAL_DETAIL_CHARS + 1234);

describe('tool details in journal entries', () => {
  it('keeps every call\'s arguments and observation (a refusal too), and cuts a long one with a marker', async () => {
    const echo = defineTool({ name: 'echo', description: 'Echo', input: z.object({ word: z.string() }), execute: ({ word }) => (word === 'long' ? LONG : `echo ${word}`) });
    const model = scriptedModel([
      { toolCalls: [{ name: 'echo', arguments: { word: 'hi' } }, { name: 'echo', arguments: { word: 'long' } }, { name: 'missing', arguments: {} }] },
      { text: 'done' },
    ]);
    const { agent, entries } = agentWithEntries({ model, tools: [echo] });
    const result = await agent.run('Echo');

    const completed = entries.find((e) => e.event.type === 'reasoning.completed')?.event as LoopEventOf<'reasoning.completed'>;
    expect(completed.toolCalls.map((call) => call.arguments)).toEqual(['{"word":"hi"}', '{"word":"long"}', '{}']);
    const observed = entries.find((e) => e.event.type === 'observations.collected')?.event as LoopEventOf<'observations.collected'>;
    const tool = result.messages.filter((m) => m.role === 'tool');
    expect(observed.results?.map((r) => r.toolCallId)).toEqual(tool.map((m) => m.toolCallId));
    expect(observed.results?.[0]?.content).toBe('echo hi');
    expect(observed.results?.[1]?.content).toBe(`${'x'.repeat(JOURNAL_DETAIL_CHARS)}… [1234 more characters]`);
    // The model was told the tool does not exist: the journal says so too.
    expect(observed.results?.[2]?.content).toBe(tool[2]?.content);
    expect(observed.results?.[2]?.content).toMatch(/missing/);
  });

  it('never cuts a character in half', () => {
    const text = `${'a'.repeat(JOURNAL_DETAIL_CHARS - 1)}😀tail`;
    const cut = capJournalDetail(text);
    expect(cut.startsWith(`${'a'.repeat(JOURNAL_DETAIL_CHARS - 1)}…`)).toBe(true);
    expect(cut.endsWith(`[${text.length - (JOURNAL_DETAIL_CHARS - 1)} more characters]`)).toBe(true);
    expect(capJournalDetail('short')).toBe('short');
  });
});
