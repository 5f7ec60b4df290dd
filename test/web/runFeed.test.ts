/**
 * A run's feed while the run is live: the entries the journal held when the page subscribed,
 * then those published after, in order and only those `keep` keeps, ending with the run's end.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { lastValueFrom, toArray } from 'rxjs';
import type { JournalEntry } from '../../src/core/loopEvent.ts';
import { scriptedModel } from '../../src/testing/index.ts';
import { runFeed } from '../../src/web/runFeed.ts';
import { stopTrackedAgents, trackAgent } from '../support/agents.ts';

afterEach(() => stopTrackedAgents());

const chunks = Array.from({ length: 30 }, (_, i) => `w${i} `);

describe('a live run\'s feed', () => {
  it('feeds the entries `keep` keeps, journaled and published alike, in order, and completes with the run\'s end', async () => {
    const agent = trackAgent({ model: { provider: scriptedModel([{ text: chunks.join(''), chunks }]), stream: true } });
    const run = agent.start('Talk', { runId: 'run-live' });
    const heldAtSubscribe = agent.journal.entries(run.runId).length;
    const keep = (entry: JournalEntry): boolean => entry.event.type !== 'token.delta';
    const fed = await lastValueFrom((await runFeed({ agent, pollIntervalMs: 1000 }, run.runId, false, keep)).pipe(toArray()));
    await run.result;
    const journal = agent.journal.entries(run.runId);
    // Most of the run, its tokens among it, came after the subscription: the live path was taken.
    expect(journal.filter((entry) => entry.event.type === 'token.delta')).toHaveLength(chunks.length);
    expect(heldAtSubscribe).toBeLessThan(journal.length - chunks.length);
    expect(fed.map((entry) => entry.sequence)).toEqual(journal.filter(keep).map((entry) => entry.sequence));
    expect(fed.at(-1)?.event.type).toBe('run.terminated');
  });
});
