/**
 * A durable run's follower reads the journal and gets a worker's streamed deltas as they come. The deltas of a
 * call can come before the follower read the step the call began in: it reads that step first, so a live read
 * orders them as the journal does, and a page that reads the run again later builds the same message.
 */
import { Subject, type Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { Agent } from '../../src/agent/types.ts';
import type { JournalEntry, LoopEvent } from '../../src/core/loopEvent.ts';
import { NO_DETAILS } from '../../src/events/agUiEncoder.ts';
import { aiSdkProtocol } from '../../src/web/aiSdk.ts';
import { runFeed } from '../../src/web/runFeed.ts';
import { sseBody } from '../../src/web/sse.ts';
import { messageOf } from './support.ts';

const RUN = 'run-order';
const CALL = `${RUN}:model:0:0`;
const usage = { promptTokens: 1, completionTokens: 2, totalTokens: 3 };
const at = (sequence: number, event: LoopEvent): JournalEntry => ({ sequence, timestamp: 0, agentId: 'a', runId: RUN, iteration: 0, event });
const token = (part: number, delta: string): JournalEntry => at(1, { type: 'token.delta', delta, live: { call: CALL, part } });

/** A run of another process: its journal so far (what `read` gives), and the agent's bus, which brings its moves and streamed deltas. */
function durableRun() {
  const journal: JournalEntry[] = [at(0, { type: 'run.started', task: 'Count.', model: 'm', tools: [] })];
  const bus = new Subject<JournalEntry>();
  const agent = { id: 'a', events$: bus as Observable<JournalEntry> } as unknown as Agent;
  const reads = { count: 0 };
  const read = (_runId: string, after = -1) => (reads.count++, journal.filter((entry) => entry.sequence > after));
  return { journal, bus, reads, source: { agent, read, everywhere: true, pollIntervalMs: 60_000 } };
}

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe("a durable run's follower", () => {
  it('AI SDK: a call whose deltas come before the follower read its step starts that step before the text, as the journal read alone does', async () => {
    const { journal, bus, source } = durableRun();
    const feed = await runFeed(source, RUN);
    const body = sseBody(feed, () => aiSdkProtocol.encoder({ runId: RUN, threadId: RUN, details: NO_DETAILS }), aiSdkProtocol, undefined, new AbortController().signal);
    const live = messageOf(new Response(body));
    await turn();
    // The worker entered the step and streams the call; the step's notice is late.
    journal.push(at(1, { type: 'phase.entered', phase: 'reason' }));
    bus.next(token(0, 'one '));
    bus.next(token(1, 'two'));
    await turn();
    bus.next(at(1, { type: 'phase.entered', phase: 'reason' }));
    await turn();
    journal.push(
      at(2, { type: 'reasoning.completed', text: 'one two', toolCalls: [], usage, call: CALL }),
      at(3, { type: 'run.terminated', reason: 'final_answer', iterations: 1, usage }),
    );
    bus.next(journal[3] as JournalEntry);
    const got = await live;

    const again = durableRun();
    again.journal.splice(0, 1, ...journal);
    const replay = sseBody(await runFeed(again.source, RUN), () => aiSdkProtocol.encoder({ runId: RUN, threadId: RUN, details: NO_DETAILS }), aiSdkProtocol, undefined, new AbortController().signal);
    const read = await messageOf(new Response(replay));
    expect(got.parts.map((part) => part.type)).toEqual(['step-start', 'data-actorloop.phase.entered', 'text', 'data-actorloop.run.terminated'].filter((type) => read.parts.some((part) => part.type === type)));
    expect(got).toEqual(read);
  });

  it('reads once for the step that deltas wait for, not once a delta, while the step is not yet to be read', async () => {
    const { journal, bus, reads, source } = durableRun();
    const fed: JournalEntry[] = [];
    const subscription = (await runFeed(source, RUN)).subscribe((entry) => fed.push(entry));
    await turn();
    const before = reads.count;
    for (let part = 0; part < 20; part++) {
      bus.next(token(part, `w${part} `));
      await turn();
    }
    expect(reads.count - before).toBe(1);
    expect(fed.filter((entry) => entry.event.type === 'token.delta')).toEqual([]);
    // The step's notice: read, and the deltas follow it.
    journal.push(at(1, { type: 'phase.entered', phase: 'reason' }));
    bus.next(journal[1] as JournalEntry);
    await turn();
    await turn();
    expect(fed.map((entry) => entry.event.type)).toEqual(['run.started', 'phase.entered', ...Array<string>(20).fill('token.delta')]);
    subscription.unsubscribe();
  });

  it("a call's deltas that come while a read that holds the call's reply is on pass before that reply, so the page has them live", async () => {
    const { journal, bus, source } = durableRun();
    journal.push(at(1, { type: 'phase.entered', phase: 'reason' }));
    let release!: () => void;
    const gate = { open: Promise.resolve() };
    // A read sent once the reply committed, its answer slow to come back.
    const read = async (runId: string, after?: number) => (await gate.open, source.read(runId, after));
    const fed: JournalEntry[] = [];
    const subscription = (await runFeed({ ...source, read }, RUN)).subscribe((entry) => fed.push(entry));
    bus.next(token(0, 'one '));
    await turn();
    gate.open = new Promise((resolve) => (release = resolve));
    journal.push(
      at(2, { type: 'reasoning.completed', text: 'one two', toolCalls: [], usage, call: CALL }),
      at(3, { type: 'run.terminated', reason: 'final_answer', iterations: 1, usage }),
    );
    // A late notice of the step the call began in starts the read; the call's last delta comes while it is on.
    bus.next(journal[1] as JournalEntry);
    bus.next(token(1, 'two'));
    await turn();
    release();
    await turn();
    await turn();
    expect(fed.map((entry) => entry.event.type)).toEqual(['run.started', 'phase.entered', 'token.delta', 'token.delta', 'reasoning.completed', 'run.terminated']);
    subscription.unsubscribe();
  });

  // Not a defect: the tail comes with the reply, once, and the page's message is the one a journal read builds.
  it("a read that holds a call's reply before its last delta's notice came gives that tail with the reply, once; the late delta adds nothing", async () => {
    const { journal, bus, source } = durableRun();
    journal.push(at(1, { type: 'phase.entered', phase: 'reason' }));
    const body = sseBody(await runFeed(source, RUN), () => aiSdkProtocol.encoder({ runId: RUN, threadId: RUN, details: NO_DETAILS }), aiSdkProtocol, undefined, new AbortController().signal);
    const live = new Response(body).text();
    await turn();
    bus.next(token(0, 'one '));
    await turn();
    journal.push(
      at(2, { type: 'reasoning.completed', text: 'one two three', toolCalls: [], usage, call: CALL }),
      at(3, { type: 'run.terminated', reason: 'final_answer', iterations: 1, usage }),
    );
    // The reply's notice comes first; the call's last deltas after it.
    bus.next(journal[2] as JournalEntry);
    await turn();
    await turn();
    bus.next(token(1, 'two '));
    bus.next(token(2, 'three'));
    bus.next(journal[3] as JournalEntry);
    const sent = await live;
    const deltas = sent.split('\n\n').flatMap((frame) => (frame.includes('"text-delta"') ? [(JSON.parse(frame.slice(frame.indexOf('{'))) as { delta: string }).delta] : []));
    expect(deltas).toEqual(['one ', 'two three']);
    const got = await messageOf(new Response(sent));

    const again = durableRun();
    again.journal.splice(0, 1, ...journal);
    const read = await messageOf(new Response(sseBody(await runFeed(again.source, RUN), () => aiSdkProtocol.encoder({ runId: RUN, threadId: RUN, details: NO_DETAILS }), aiSdkProtocol, undefined, new AbortController().signal)));
    expect(got.parts.filter((part) => part.type === 'text')).toEqual([{ type: 'text', text: 'one two three', state: 'done', providerMetadata: undefined }]);
    expect(got).toEqual(read);
  });
});
