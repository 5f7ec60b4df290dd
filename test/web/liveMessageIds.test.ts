/**
 * A durable run's model call streams to followers as live deltas, in no journal; its reply is in the
 * journal. Both encoders name the message (and the AI SDK's reasoning part) the same whether the live
 * deltas opened it or the reply did, so a page that reconnects mid-call gets the message it had, not a second one.
 */
import { describe, expect, it } from 'vitest';
import type { AiSdkChunk } from '../../src/web/aiSdk.ts';
import { aiSdkProtocol } from '../../src/web/aiSdk.ts';
import { AgUiEncoder, NO_DETAILS, type RunView } from '../../src/events/agUiEncoder.ts';
import type { JournalEntry, LoopEvent } from '../../src/core/loopEvent.ts';

const RUN = 'run-live';
const CALL = `${RUN}:model:1:0`;
const view: RunView = { runId: RUN, threadId: 'thread', details: NO_DETAILS };
const usage = { promptTokens: 1, completionTokens: 2, totalTokens: 3 };

const at = (sequence: number, event: LoopEvent): JournalEntry => ({ sequence, timestamp: 0, agentId: 'a', runId: RUN, iteration: 0, event });
/** The journal of a run whose one call streamed live: the reply names the call. */
const journal: JournalEntry[] = [
  at(0, { type: 'run.started', task: 'Count.', model: 'm', tools: [] }),
  at(1, { type: 'phase.entered', phase: 'reason' }),
  at(2, { type: 'reasoning.completed', text: 'one two three', toolCalls: [], usage, reasoning: 'counting', call: CALL }),
  at(3, { type: 'run.terminated', reason: 'final_answer', iterations: 1, usage }),
];
/** The call's live deltas, as a follower gets them: at the run's last entry before the call. */
const live = (part: number, type: 'token.delta' | 'thinking.delta', delta: string): JournalEntry => at(1, { type, delta, live: { call: CALL, part } });
const followed: JournalEntry[] = [...journal.slice(0, 2), live(0, 'thinking.delta', 'counting'), live(1, 'token.delta', 'one '), live(2, 'token.delta', 'two '), ...journal.slice(2)];

function agUiStarts(entries: readonly JournalEntry[]): string[] {
  const encoder = new AgUiEncoder(view);
  return entries.flatMap((entry) => encoder.encode(entry)).flatMap((event) => (event?.type === 'TEXT_MESSAGE_START' ? [event.messageId] : []));
}

function aiSdkStarts(entries: readonly JournalEntry[]): string[] {
  const encoder = aiSdkProtocol.encoder(view);
  const chunks = entries.flatMap((entry) => encoder.encode(entry)).filter((chunk): chunk is AiSdkChunk => chunk !== undefined);
  return chunks.flatMap((chunk) => (chunk.type === 'text-start' || chunk.type === 'reasoning-start' ? [chunk.id] : []));
}

describe("a durable run's streamed message", () => {
  it('has the same AG-UI message id whether its live deltas opened it or the journal’s reply did', () => {
    const opened = agUiStarts(followed);
    expect(opened).toHaveLength(1);
    expect(agUiStarts(journal)).toEqual(opened);
  });

  it('has the same AI SDK text and reasoning part ids whether its live deltas opened them or the journal’s reply did', () => {
    const opened = aiSdkStarts(followed);
    expect(opened).toHaveLength(2);
    expect(new Set(opened).size).toBe(2);
    expect(aiSdkStarts(journal)).toEqual(opened);
  });
});
