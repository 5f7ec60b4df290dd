/**
 * The body of a run tree's stream under a reader that falls behind: it stops encoding a bounded
 * number of entries ahead, follows the tree again from the journals once the reader caught up,
 * and the reader gets every event of every run once, as an unhurried reader would.
 */
import { defer, from } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import type { Event as AgUiEvent } from '@ag-ui/core';
import type { JournalEntry } from '../../src/core/loopEvent.ts';
import { NO_DETAILS } from '../../src/events/agUiEncoder.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { agUiProtocol } from '../../src/web/agUi.ts';
import type { StreamEncoder, SubRun } from '../../src/web/protocol.ts';
import type { TreeEntry } from '../../src/web/runTree.ts';
import { parseTreeEventId, treeSseBody } from '../../src/web/treeSse.ts';
import { stopTrackedAgents, trackAgent } from '../support/agents.ts';
import { parseSse } from './support.ts';

afterEach(() => stopTrackedAgents());

const words = (prefix: string) => Array.from({ length: 120 }, (_, i) => `${prefix}${i} `);

/** The journal of a finished run streaming `chunks`. */
async function finishedRun(runId: string, chunks: string[]): Promise<readonly JournalEntry[]> {
  const agent = trackAgent({ model: { provider: scriptedModel([{ text: chunks.join(''), chunks }]), stream: true } });
  await agent.start('Talk', { runId }).result;
  return agent.journal.entries(runId);
}

async function read(body: ReadableStream<Uint8Array>): Promise<string> {
  const decoder = new TextDecoder();
  let text = '';
  for await (const chunk of body) text += decoder.decode(chunk);
  return text;
}

describe('a run tree streamed to a reader that falls behind', () => {
  it('encodes a bounded number of entries ahead, then feeds each run again from its journal: every event once, as an unhurried reader gets them', async () => {
    const lead = await finishedRun('run-lead', words('lead'));
    const helper = await finishedRun('run-helper', words('helper'));
    const sub: SubRun = { runId: 'run-helper', agentId: 'helper', parentRunId: 'run-lead' };
    // The two runs' entries interleaved, the served run's end last; read again from the start on each subscription.
    const entries: TreeEntry[] = [];
    for (let i = 0; i < Math.max(lead.length, helper.length); i++) {
      const own = lead[i];
      const theirs = helper[i];
      if (theirs !== undefined) entries.push({ key: '1', entry: theirs, sub });
      if (own !== undefined && i < lead.length - 1) entries.push({ key: '', entry: own });
    }
    entries.push({ key: '', entry: lead.at(-1) as JournalEntry });
    const feed = defer(() => from(entries));

    const counts = { encoders: 0, encoded: 0 };
    const encoderOf = (of: SubRun | undefined): StreamEncoder<AgUiEvent> => {
      counts.encoders++;
      const inner = agUiProtocol.encoder({ runId: of?.runId ?? 'run-lead', threadId: 'run-lead', details: NO_DETAILS });
      return { ...inner, encode: (entry) => (counts.encoded++, inner.encode(entry)), failure: (message, code) => inner.failure(message, code) };
    };
    const slow = treeSseBody(feed, encoderOf, agUiProtocol, undefined, new AbortController().signal, 10);
    // Nobody has read yet: the body stopped after about ten entries with events.
    expect(counts.encoded).toBeLessThan(25);
    const slowText = await read(slow);
    expect(counts.encoders).toBeGreaterThan(4);

    const unhurried = await read(treeSseBody(feed, encoderOf, agUiProtocol, undefined, new AbortController().signal));
    const slowEvents = parseSse(slowText);
    expect(slowEvents).toEqual(parseSse(unhurried));
    const ids = slowEvents.map((event) => event.id);
    expect(new Set(ids).size).toBe(ids.length);
    const text = (runId: string | undefined) =>
      slowEvents.flatMap(({ data }) => (data.type === 'TEXT_MESSAGE_CONTENT' && (data as { subagentRunId?: string }).subagentRunId === runId ? [data.delta as string] : [])).join('');
    expect(text('run-helper')).toBe(words('helper').join(''));
    expect(text(undefined)).toBe(words('lead').join(''));
    expect(slowEvents.at(-1)?.data.type).toBe('RUN_FINISHED');
  });

  it("joins the text deltas of one message that waited for the reader, never two runs' deltas, and keeps every id a resume point", async () => {
    const lead = await finishedRun('run-lead', words('lead'));
    const helper = await finishedRun('run-helper', words('helper'));
    const sub: SubRun = { runId: 'run-helper', agentId: 'helper', parentRunId: 'run-lead' };
    // The helper's whole run, then the lead's: each one's deltas arrive back to back.
    const entries: TreeEntry[] = [...helper.map((entry) => ({ key: '1', entry, sub })), ...lead.map((entry) => ({ key: '', entry }))];
    const encoderOf = (of: SubRun | undefined): StreamEncoder<AgUiEvent> => agUiProtocol.encoder({ runId: of?.runId ?? 'run-lead', threadId: 'run-lead', details: NO_DETAILS });
    const events = parseSse(await read(treeSseBody(from(entries), encoderOf, agUiProtocol, undefined, new AbortController().signal)));

    const deltas = events.filter(({ data }) => data.type === 'TEXT_MESSAGE_CONTENT');
    expect(deltas.length).toBeLessThan(10);
    const text = (runId: string | undefined) =>
      deltas.flatMap(({ data }) => ((data as { subagentRunId?: string }).subagentRunId === runId ? [data.delta as string] : [])).join('');
    expect(text('run-helper')).toBe(words('helper').join(''));
    expect(text(undefined)).toBe(words('lead').join(''));
    const ids = events.flatMap((event) => (event.id === undefined ? [] : [event.id]));
    expect(new Set(ids).size).toBe(ids.length);
    // A joined delta carries the id of its last part: reconnecting after it resumes past all of it.
    const helperText = deltas.find(({ data }) => (data as { subagentRunId?: string }).subagentRunId === 'run-helper');
    const rest = parseSse(await read(treeSseBody(from(entries), encoderOf, agUiProtocol, parseTreeEventId(helperText?.id ?? null), new AbortController().signal)));
    expect(rest.some(({ data }) => data.type === 'TEXT_MESSAGE_CONTENT' && (data as { subagentRunId?: string }).subagentRunId === 'run-helper')).toBe(false);
  });
});
